/**
 * `mvr mcp` over stdio, spawned as `node bin/mvr.js mcp ...` through the SDK's
 * StdioClientTransport: answering from local folders (--records/--public) and from a real
 * gateway (--base-url/--api-key).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { openSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KEY_SET_PATH, verdictOf, verifyBundle } from '@merchant-verify/verifier';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../support/cli.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { firstText } from '../support/mcp.ts';
import { liveRecord } from '../support/outputs.ts';
import { GOLD, ISSUER, makeProject, type Project, tempDir, UNAUDITED } from '../support/project.ts';
import { waitForExit } from '../support/wait.ts';

interface StdioServer {
  client: Client;
  /** Everything the server wrote on stderr (stdout is the protocol). */
  stderr(): string;
}

const clients: Client[] = [];

/** Spawns `node bin/mvr.js mcp ...args` in `cwd` and connects the SDK client to it. */
async function spawnMcp(cwd: string, args: string[]): Promise<StdioServer> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], cwd, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const client = new Client({ name: 'mvr-stdio-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  return { client, stderr: () => err };
}

let project: Project;
let gw: TestGateway;
let local: StdioServer;
let viaGateway: StdioServer;

beforeAll(async () => {
  project = await makeProject();
  gw = await startTestGateway(project);
  [local, viaGateway] = await Promise.all([
    spawnMcp(project.root, ['--records', project.recordsDir, '--public', project.publicDir, '--issuer', ISSUER]),
    spawnMcp(project.root, ['--base-url', gw.url, '--api-key', gw.key]),
  ]);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await cleanup();
});

const call = (server: StdioServer, domain: string) => server.client.callTool({ name: 'verify_merchant', arguments: { domain } });

describe.each([
  { mode: 'local folders', server: () => local, keySetUrl: () => `https://${ISSUER}${KEY_SET_PATH}`, remote: false },
  { mode: 'gateway', server: () => viaGateway, keySetUrl: () => `${gw.url}${KEY_SET_PATH}`, remote: true },
])('mvr mcp over stdio ($mode)', ({ server, keySetUrl, remote }) => {
  it('lists verify_merchant with its description, output schema and annotations', async () => {
    const { tools } = await server().client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['verify_merchant', 'verify_merchants', 'merchant_history']);
    const tool = tools[0]!;
    expect(tool.title).toBeTruthy();
    expect(tool.description).toContain(keySetUrl());
    for (const word of ['verified', 'provisional', 'flagged', 'unverified', 'gold', 'silver', 'bronze'])
      expect(tool.description).toContain(word);
    expect(tool.outputSchema).toMatchObject({ type: 'object' });
    expect(tool.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  });

  it('a signed record: the stored bytes, the same as GET /v1/verify', async () => {
    // Over a gateway the default is private, which does not fetch the record: asked plainly here.
    const result = await server().client.callTool({
      name: 'verify_merchant',
      arguments: { domain: `https://www.${GOLD}/`, private: false },
    });
    expect(result.isError).toBeFalsy();
    const text = firstText(result);
    expect(Buffer.from(text)).toEqual((await liveRecord(project, GOLD)).bytes);
    expect(text).toBe((await gw.verify(GOLD)).text);
    expect(result.structuredContent).toMatchObject({ valid: true, code: null, record: JSON.parse(text) });
    expect(result.structuredContent).toMatchObject({ record: { domain: GOLD, status: 'verified', key_id: project.kid } });
  });

  it('include_proof with the plain lookup: the bundle in the structured result, which verifyBundle accepts', async () => {
    // The bundle names the domain: over a gateway it comes only when the lookup is asked to be plain.
    const args = { domain: GOLD, include_proof: true, private: false };
    const result = await server().client.callTool({ name: 'verify_merchant', arguments: args });
    const { bundle } = result.structuredContent as { bundle: unknown };
    const keySet = JSON.parse(await readFile(project.keySetFile, 'utf8')) as unknown;
    expect(verdictOf(verifyBundle({ bundle, domain: GOLD, keySet }))).toEqual({ valid: true, code: null, message: null });
  });

  it('an unaudited domain: status unverified, score null', async () => {
    const result = await call(server(), UNAUDITED);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      valid: false,
      code: 'NEVER_AUDITED',
      record: { domain: UNAUDITED, status: 'unverified', tier: null, score: null, issuer: ISSUER },
    });
    expect((result.structuredContent as { record: object }).record).not.toHaveProperty('signature');
  });

  it('private: true asks by a bucket of the hash and gives the same verdicts; its description says whom it hides the domain from', async () => {
    const { tools } = await server().client.listTools();
    const described = (tools[0]!.inputSchema.properties as Record<string, { description?: string }>).private?.description ?? '';
    expect(described).toContain(remote ? 'remote gateway, which then never learns the domain' : 'it already sees the domain you send');
    const from = gw.logs.length;
    const privately = (domain: string) => server().client.callTool({ name: 'verify_merchant', arguments: { domain, private: true } });
    const gold = await privately(`https://www.${GOLD}/`);
    const never = await privately(UNAUDITED);
    const logged = gw.logs.slice(from).map((l) => JSON.stringify(l));
    for (const [result, plain] of [
      [gold, await call(server(), GOLD)],
      [never, await call(server(), UNAUDITED)],
    ] as const) {
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      // A never-audited record is made as of the lookup (plain) or of the build its absence is proven in (private);
      // an audited domain's verdict is its map entry's: the record's claims, no record.
      const { valid, code, claims, record } = plain.structuredContent as { record: Record<string, unknown> | null } & Record<
        string,
        unknown
      >;
      if (code === 'NEVER_AUDITED')
        expect(result.structuredContent).toMatchObject({ valid, code, claims, record: { ...record, issued_at: expect.any(String) } });
      else expect(result.structuredContent).toMatchObject({ valid, code, record: null, entry: { record_fetched: false } });
    }
    const claimed = (await liveRecord(project, GOLD)).record as Record<string, unknown>;
    expect(gold.structuredContent).toMatchObject({
      valid: true,
      code: null,
      claims: { status: claimed.status, tier: claimed.tier, score: claimed.score },
      entry: {
        record_hash: createHash('sha256')
          .update((await liveRecord(project, GOLD)).bytes)
          .digest('base64'),
      },
      record: null,
    });
    expect(never.structuredContent).toMatchObject({ valid: false, code: 'NEVER_AUDITED', record: { domain: UNAUDITED } });
    // Through a gateway, what it was asked (and logged) names a bucket, never the domain.
    if (remote) expect(logged.some((l) => l.includes('/v1/lookup/'))).toBe(true);
    for (const line of logged) for (const name of [GOLD, UNAUDITED]) expect(line).not.toContain(name);
  });

  it('an invalid domain: isError, INVALID_DOMAIN', async () => {
    for (const domain of ['co.uk', 'localhost']) {
      const result = await call(server(), domain);
      expect(result.isError, domain).toBe(true);
      expect(firstText(result)).toMatch(/^INVALID_DOMAIN/);
    }
  });
});

describe('mvr mcp over stdio: failures', () => {
  it('keeps stdout for the protocol: the readiness line goes to stderr', () => {
    expect(local.stderr()).toMatch(/merchant_history ready on stdio \(local records\)/);
    expect(viaGateway.stderr()).toMatch(/merchant_history ready on stdio \(gateway\)/);
  });

  it('a local records folder without a build: STORE_UNAVAILABLE, not an unverified record', async () => {
    const empty = await tempDir();
    const server = await spawnMcp(empty, ['--records', `${empty}/records`, '--public', project.publicDir]);
    const result = await call(server, UNAUDITED);
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(/^STORE_UNAVAILABLE/);
  });

  it('a gateway that refuses the key: the tool reports UNAUTHORIZED', async () => {
    const server = await spawnMcp(project.root, [
      '--base-url',
      gw.url,
      '--api-key',
      'mvr_0000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ]);
    const result = await call(server, GOLD);
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(/^UNAUTHORIZED/);
  });

  it('--base-url without an API key is a usage error (exit 2)', async () => {
    const r = await runCli(['mcp', '--base-url', gw.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--api-key/);
  });
});

/** Three requests in a file, as a user pipes them: initialize, the initialized notification, one tool call. */
const PIPED = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'piped', version: '1' } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'verify_merchant', arguments: { domain: GOLD } } },
];

describe('mvr mcp with its input from a file', () => {
  it.each([
    { mode: 'local folders', args: () => ['--records', project.recordsDir, '--public', project.publicDir, '--issuer', ISSUER] },
    { mode: 'gateway', args: () => ['--base-url', gw.url, '--api-key', gw.key] },
  ])('answers every request read before the input ends, then exits 0 ($mode)', async ({ args }) => {
    const file = join(await tempDir(), 'requests.jsonl');
    writeFileSync(file, `${PIPED.map((m) => JSON.stringify(m)).join('\n')}\n`);
    const child = spawn(process.execPath, [BIN, 'mcp', ...args()], { cwd: project.root, stdio: [openSync(file, 'r'), 'pipe', 'pipe'] });
    let out = '',
      err = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
    expect(await waitForExit(child, 'mvr mcp < requests.jsonl', () => err)).toBe(0);
    const answers = out
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id: number; result?: { content?: { text: string }[]; isError?: boolean } });
    // The notification has no answer: two answers, in the order asked.
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1]!.result?.isError).toBeFalsy();
    expect(JSON.parse(answers[1]!.result!.content![0]!.text)).toMatchObject({ domain: GOLD, status: 'verified' });
  });
});
