import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { defineCommand } from 'citty';
import { join } from 'node:path';
import { request } from 'undici';
import { ConfigError, MvrError } from '../../core/errors.ts';
import { KEY_SET_PATH } from '../../core/keyset.ts';
import { FolderRecordSource } from '../../gateway/store/folder-source.ts';
import { KeySetSource } from '../../gateway/store/key-set-source.ts';
import { RecordStore } from '../../gateway/store/record-store.ts';
import { recordFor } from '../../gateway/routes/verify.ts';
import { createVerifyMerchantServer, keySetUrlOf, type RecordLookup } from '../../mcp/verify-merchant-tool.ts';
import { folderArgs, issuerArgs, resolveFolders, resolveIssuer, type Env } from '../config.ts';
import { runAction } from '../cli-output.ts';

export default defineCommand({
  meta: { name: 'mcp', description: 'The verify_merchant MCP tool over stdio, answering from a gateway (--base-url) or a local records folder' },
  args: {
    'base-url': { type: 'string', description: 'gateway to answer from (env MVR_BASE_URL)' },
    'api-key': { type: 'string', description: 'API key for the gateway (env MVR_API_KEY)' },
    records: folderArgs.records,
    public: folderArgs.public,
    ...issuerArgs,
  },
  run: ({ args }) =>
    runAction(false, async () => {
      const { lookup, keySetUrl } = await lookupFromArgs(args, process.env);
      const server = createVerifyMerchantServer(lookup, { keySetUrl });
      await server.connect(new StdioServerTransport());
      // stdout is the protocol: anything human goes to stderr.
      process.stderr.write(`mvr mcp: verify_merchant ready on stdio (${args['base-url'] || process.env.MVR_BASE_URL ? 'gateway' : 'local records'})\n`);
    }),
});

async function lookupFromArgs(args: Record<string, unknown>, env: Env): Promise<{ lookup: RecordLookup; keySetUrl: string }> {
  const str = (k: string) => (typeof args[k] === 'string' && args[k] !== '' ? (args[k] as string) : undefined);
  const baseUrl = str('base-url') ?? env.MVR_BASE_URL;
  if (baseUrl) {
    const apiKey = str('api-key') ?? env.MVR_API_KEY;
    if (!apiKey) throw new ConfigError('--api-key (or MVR_API_KEY) is required with --base-url');
    return { lookup: gatewayLookup(baseUrl, apiKey), keySetUrl: keySetUrlOf(baseUrl) };
  }
  const folders = resolveFolders({ records: str('records'), public: str('public') }, env);
  const { issuer, schemaUrl } = resolveIssuer({ issuer: str('issuer'), 'schema-url': str('schema-url') }, env);
  const store = new RecordStore(new FolderRecordSource(folders.recordsDir), new KeySetSource(join(folders.publicDir, KEY_SET_PATH)), {
    cacheBytes: 16 * 1024 * 1024,
    onRejected: (domain, reason) => process.stderr.write(`mvr mcp: record rejected: ${domain}: ${reason}\n`),
  });
  await store.refresh();
  setInterval(() => void store.refresh().catch(() => undefined), 1000).unref();
  return {
    lookup: async (domain) => (await recordFor(domain, { store, issuer, schemaUrl, unverifiedSigner: null })).bytes,
    keySetUrl: `https://${issuer}${KEY_SET_PATH}`,
  };
}

/** Asks a gateway; its problem documents become the same coded errors the local store throws. */
function gatewayLookup(baseUrl: string, apiKey: string): RecordLookup {
  const base = baseUrl.replace(/\/+$/, '');
  return async (domain) => {
    let res;
    try {
      res = await request(`${base}/v1/verify?domain=${encodeURIComponent(domain)}`, {
        headers: { authorization: `Bearer ${apiKey}` },
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
    } catch (error) {
      throw new MvrError('STORE_UNAVAILABLE', `cannot reach the gateway at ${base}: ${(error as Error).message}`);
    }
    const bytes = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode === 200) return bytes;
    let problem: { code?: string; detail?: string } = {};
    try {
      problem = JSON.parse(bytes.toString('utf8'));
    } catch {
      // not a problem document; fall through with the status alone
    }
    throw new MvrError(problem.code ?? 'UNAVAILABLE', problem.detail ?? `the gateway answered ${res.statusCode}`);
  };
}
