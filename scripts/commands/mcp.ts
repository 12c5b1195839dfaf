import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { defineCommand } from 'citty';
import { ConfigError, MvrError } from '../../core/errors.ts';
import { KEY_SET_PATH } from '../../core/keyset.ts';
import { openRecordStore } from '../../gateway/store/record-store.ts';
import { fetchRecordFromGateway } from '../../verifier/gateway-client.ts';
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
  const store = openRecordStore(folders.recordsDir, folders.publicDir, {
    cacheBytes: 16 * 1024 * 1024,
    onRejected: (domain, reason) => process.stderr.write(`mvr mcp: record rejected: ${domain}: ${reason}\n`),
  });
  await store.refresh();
  setInterval(() => void store.refresh().catch(() => undefined), 1000).unref();
  // One context for every lookup: the never-audited template and recent answers are kept per context.
  const ctx = { store, issuer, schemaUrl, unverifiedSigner: null };
  return {
    lookup: async (domain) => (await recordFor(domain, ctx)).bytes,
    keySetUrl: `https://${issuer}${KEY_SET_PATH}`,
  };
}

/** Asks a gateway; its problem documents become the same coded errors the local store throws. */
function gatewayLookup(baseUrl: string, apiKey: string): RecordLookup {
  return async (domain) => {
    let answer;
    try {
      answer = await fetchRecordFromGateway(baseUrl, apiKey, domain);
    } catch (error) {
      throw new MvrError('STORE_UNAVAILABLE', (error as Error).message);
    }
    if (answer.ok) return answer.bytes;
    throw new MvrError(answer.code ?? 'UNAVAILABLE', answer.detail || `the gateway answered ${answer.status}`);
  };
}
