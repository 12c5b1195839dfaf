/**
 * The JSON this project defines is snake_case, whichever edge writes it: the CLI's `--json` of each
 * command, the MCP tools' structured content and the gateway's JSON answers. Each is run for real
 * (a logged build, its gateway on a loopback port, an MCP client of it) and every member name is
 * walked; a camelCase one fails here, naming where it is. Members named by a standard keep the
 * standard's spelling: they are listed below, each with its standard.
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_TOOL_NAME, HISTORY_TOOL_NAME, TOOL_NAME } from '../../mcp/server.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { gatewayOver, loggedProject, vkeyFile } from '../support/logged-project.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { GOLD, type Project, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';

/**
 * Member names a standard spells otherwise, none of them camelCase today but kept here so a
 * standard's name is never "fixed": JWK (RFC 7517/8037: kty, crv, x, kid, use, alg) and RFC 9457
 * problem documents (type, title, status, detail, instance) are all lower case. The OpenAPI
 * document and the JSON Schemas (`/openapi.json`, `/schemas/...`) are those standards' own
 * vocabulary (`operationId`, `additionalProperties`, ...) and are not walked; neither is the MCP
 * protocol's envelope (`structuredContent`, `isError`): only the structured content we define.
 */
const STANDARD_MEMBERS = new Set<string>([
  // JWK (RFC 7517, RFC 8037)
  'kty',
  'crv',
  'x',
  'kid',
  'use',
  'alg',
  // RFC 9457 problem documents
  'type',
  'title',
  'status',
  'detail',
  'instance',
]);

const CAMEL = /[a-z0-9][A-Z]/;

/** Every member name in `value` that is camelCase, with its path (`$.staleness.ageDays`). */
function camelCaseMembers(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => camelCaseMembers(v, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, v]) => [
    ...(CAMEL.test(key) && !STANDARD_MEMBERS.has(key) ? [`${path}.${key}`] : []),
    ...camelCaseMembers(v, `${path}.${key}`),
  ]);
}

/** The JSON lines of a command's output (stdout, or stderr's progress lines), each parsed. */
const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{') || l.startsWith('['))
    .map((l) => JSON.parse(l) as unknown);

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
