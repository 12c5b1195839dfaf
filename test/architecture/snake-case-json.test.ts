/**
 * The JSON this project defines is snake_case, whichever edge writes it: the CLI's `--json` of each
 * command, the MCP tools' structured content and the gateway's JSON answers. Each is run for real
 * (a logged build, its gateway on a loopback port, an MCP client of it) and every member name is
 * walked; a camelCase one fails here, naming where it is. Members named by a standard keep the
 * standard's spelling (test/support/json-members.ts lists them). The commands that need a bucket, a
 * witness or a mirror are walked by the same function where their tests run them: `mvr init`
 * (test/cli/init.test.ts), `publish` and `pull` (test/cli/progress.test.ts), `mirror` and `verify
 * --mirror` (test/mirror/mirror-serve.test.ts), `log witness` (test/witnessed/log-witness-refresh.test.ts)
 * and `verify --policy` (test/witness/verify-witnessed.test.ts).
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_TOOL_NAME, HISTORY_TOOL_NAME, TOOL_NAME } from '../../mcp/server.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { camelCaseMembers, jsonLines } from '../support/json-members.ts';
import { gatewayOver, loggedProject, vkeyFile } from '../support/logged-project.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { GOLD, type Project, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';

let p: Project;
let g: TestGateway;
let mcp: Client;
/** Each output walked: where it came from, and its JSON. */
const outputs: { from: string; json: unknown }[] = [];

async function cli(args: string[]) {
  const r = await runCli(args);
  for (const json of jsonLines(r.stdout)) outputs.push({ from: `mvr ${args.slice(0, 2).join(' ')} (stdout)`, json });
  for (const json of jsonLines(r.stderr)) outputs.push({ from: `mvr ${args.slice(0, 2).join(' ')} (stderr)`, json });
  return r;
}

beforeAll(async () => {
  p = await loggedProject();
  const built = await cli(buildArgs(p, ['--json']));
  if (built.code !== 0) throw new Error(built.stderr);
  g = await gatewayOver(p);
  mcp = await connectHttpClient(g.url, g.key);
}, 60_000);
afterAll(async () => {
  await mcp?.close();
  await cleanup();
  await removeTempDirs();
});

describe('the JSON this project defines is snake_case', () => {
  it("the CLI's --json of each command", async () => {
    const gateway = ['--base-url', g.url, '--api-key', g.key];
    const keys = await tempDir('mvr-snake-keys-');
    await cli(['keygen', '--keys', keys, '--json']);
    await cli(['keygen', '--keys', keys, '--json']); // endorsed by the first
    await cli(['keygen', '--keys', keys, '--list', '--json']);
    await cli(['keygen', '--log', '--keys', keys, '--issuer', 'snake.example', '--json']);
    await cli(['keygen', '--witness', '--keys', keys, '--issuer', 'snake.example', '--json']);
    const apiKeys = join(keys, 'api-keys.json');
    const created = await cli(['apikey', 'create', '--label', 'snake', '--api-keys', apiKeys, '--json']);
    await cli(['apikey', 'list', '--api-keys', apiKeys, '--json']);
    await cli(['apikey', 'revoke', (JSON.parse(created.stdout) as { key: string }).key, '--api-keys', apiKeys, '--json']);
    await cli(['verify', GOLD, ...gateway, '--log', '--json']);
    await cli(['verify', UNAUDITED, ...gateway, '--json']);
    await cli(['verify', GOLD, ...gateway, '--private', '--json']);
    await cli(['verify', GOLD, ...gateway, '--bundle-out', join(keys, 'bundle.json'), '--json']);
    await cli(['verify', GOLD, '--bundle', join(keys, 'bundle.json'), '--key-set', p.keySetFile, '--log-key', vkeyFile(p), '--json']);
    await cli(['verify', 'not a domain', ...gateway, '--json']); // an error before any verdict
    await cli(['log', 'check', '--public', p.publicDir, '--json']);
    await cli(['log', 'pull', '--from', g.url, '--to', join(keys, 'log'), '--json']);
    await cli(['changes', '--records', p.recordsDir, '--public', p.publicDir, '--json']);
    expect(outputs.length).toBeGreaterThan(15);
    expect(outputs.flatMap((o) => camelCaseMembers(o.json).map((m) => `${o.from}: ${m}`))).toEqual([]);
  });

  it("the MCP tools' structured content", async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([HISTORY_TOOL_NAME, TOOL_NAME, BATCH_TOOL_NAME].sort());
    const calls: [string, Record<string, unknown>][] = [
      [TOOL_NAME, { domain: GOLD, include_proof: true }],
      [TOOL_NAME, { domain: UNAUDITED }],
      [BATCH_TOOL_NAME, { domains: [GOLD, UNAUDITED, 'not a domain'] }],
      [HISTORY_TOOL_NAME, { domain: GOLD }],
    ];
    const found: string[] = [];
    for (const [name, args] of calls) {
      const result = await mcp.callTool({ name, arguments: args });
      expect(result.isError, `${name} ${JSON.stringify(result.content)}`).toBeFalsy();
      expect(result.structuredContent).toBeDefined();
      found.push(...camelCaseMembers(result.structuredContent).map((m) => `${name}: ${m}`));
    }
    expect(found).toEqual([]);
  });

  it("the gateway's JSON answers, and its problem documents", async () => {
    const builds = (await g.request('/v1/builds')).json as { builds: { id: string }[] };
    const routes: [string, { method?: string; body?: string; key?: null }?][] = [
      [`/v1/verify?domain=${GOLD}`],
      [`/v1/verify?domain=${UNAUDITED}`],
      ['/v1/verify/batch', { method: 'POST', body: JSON.stringify({ domains: [GOLD, UNAUDITED, 'not a domain'] }) }],
      [`/v1/absence?domain=${UNAUDITED}`],
      [`/v1/bundle?domain=${GOLD}`],
      ['/v1/builds'],
      [`/v1/history?domain=${GOLD}`],
      [`/v1/changes?since=${builds.builds.at(-1)!.id}`],
      ['/.well-known/merchant-verify-keys.json'],
      ['/healthz'],
      ['/v1/lookup'],
      ['/v1/verify?domain=not%20a%20domain'], // a problem document
      [`/v1/verify?domain=${GOLD}`, { key: null }], // 401
    ];
    const found: string[] = [];
    for (const [path, opts] of routes) {
      const reply = await g.request(path, opts);
      expect(reply.json, `${path}: ${reply.status} ${reply.text.slice(0, 200)}`).toBeDefined();
      found.push(...camelCaseMembers(reply.json).map((m) => `${path}: ${m}`));
    }
    expect(found).toEqual([]);
  });

  it('the walk finds a camelCase member where it is, and only there', () => {
    expect(camelCaseMembers({ staleness: { last_audited_at: 1, ageDays: 2 }, list: [{ keyId: 'k' }] })).toEqual([
      '$.staleness.ageDays',
      '$.list[0].keyId',
    ]);
  });
});
