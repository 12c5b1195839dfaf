/**
 * `mvr mcp --base-url` looks domains up privately unless told otherwise: the real MCP SDK client
 * over stdio, the real gateway behind a proxy that records every request line and body, as anyone
 * on the path would see them.
 */
import { createHash } from 'node:crypto';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { GOLD, makeProject, UNAUDITED } from '../support/project.ts';
import { type RecordingProxy, startRecordingProxy } from '../support/recording-proxy.ts';

const hexHash = (domain: string) => createHash('sha256').update(domain).digest('hex');

/** Never-audited names whose hashes start with GOLD's first three hex digits: any prefix of up to 12 bits holds them and GOLD together. */
function sharingGoldsPrefix(count: number): string[] {
  const start = hexHash(GOLD).slice(0, 3);
  const found: string[] = [];
  for (let n = 0; found.length < count; n++) if (hexHash(`shop-${n}.example`).startsWith(start)) found.push(`shop-${n}.example`);
  return found;
}

// Audited (verified, provisional, flagged), never audited, one given as a URL, and one sharing GOLD's prefix.
const AUDITED = ['acme-outdoor.example', 'quiet-pottery.example', 'sparse-signals.example', 'dubious-deals.example', 'gadget-hub.example'];
const NEIGHBOURS = sharingGoldsPrefix(3);
const DOMAINS = [...AUDITED, UNAUDITED, ...NEIGHBOURS];
const BATCH = [...DOMAINS.slice(1), `https://www.${GOLD}/tents?size=2`, 'not a domain'];

let gw: TestGateway;
let proxy: RecordingProxy;
let client: Client;

beforeAll(async () => {
  const project = await makeProject();
  gw = await startTestGateway(project);
  proxy = await startRecordingProxy(gw.url);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--base-url', proxy.url, '--api-key', gw.key],
    cwd: project.root,
    stderr: 'pipe',
  });
  client = new Client({ name: 'mvr-private-test', version: '1.0.0' });
  await client.connect(transport);
});
afterAll(async () => {
  await client?.close();
  await proxy?.close();
  await cleanup();
});

type Verdict = { valid: boolean; code: string | null; claims: unknown; record: Record<string, unknown> | null };
type BatchResult = {
  domain: string;
  record?: Record<string, unknown> | null;
  verification?: Omit<Verdict, 'record'>;
  problem?: { code: string };
};

/** What the proxy saw while `run` ran: each request line and body, one string a request. */
async function seen(
  run: () => Promise<unknown>,
): Promise<{ wire: string[]; lookups: { path: string; status: number | null }[]; statements: number }> {
  const from = proxy.requests.length;
  await run();
  const sent = proxy.requests.slice(from);
  return {
    wire: sent.map((r) => `${r.line}\n${r.body}`),
    lookups: sent.flatMap((r) => (r.line.includes(' /v1/lookup/') ? [{ path: r.line.split(' ')[1]!, status: r.status }] : [])),
    statements: sent.filter((r) => r.line.startsWith('GET /v1/lookup ')).length,
  };
}

const verify = async (args: Record<string, unknown>) => {
  const result = await client.callTool({ name: 'verify_merchant', arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as Verdict;
};
const verifyBatch = async (args: Record<string, unknown>) => {
  const result = await client.callTool({ name: 'verify_merchants', arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return (result.structuredContent as { results: BatchResult[] }).results;
};

/**
 * The private form of the plain verdict `v`: a never-audited record made as of the lookup (plain) or
 * of the build its absence is proven in (private); an audited domain's verdict from its map entry,
 * with the record's claims and the hash of its exact bytes, and no record (it was not fetched).
 */
const sameVerdict = (v: Omit<Verdict, 'record'> & { record?: Record<string, unknown> | null }) => {
  const r = v.record!;
  if (r.status === 'unverified') return { valid: v.valid, code: v.code, claims: v.claims, record: { ...r, issued_at: expect.any(String) } };
  return {
    valid: v.valid,
    code: v.code,
    claims: { status: r.status, tier: r.tier, score: r.score, next_audit_at: r.next_audit_at },
    signature: null,
    entry: { valid: true, record_fetched: false, record_hash: createHash('sha256').update(JSON.stringify(r)).digest('base64') },
    record: null,
  };
};

/** Every lookup line is the live statement's or a bucket's of the bits it signs: never the JSON prefix route. */
const BUCKET_PATH = /^\/v1\/lookup\/\d+\/[0-9a-f]+$/;

/** Fails when any request line or body names a domain (as normalized, or any part of it as given). */
function expectNoDomain(wire: string[]): void {
  for (const request of wire) for (const domain of DOMAINS) expect(request, domain).not.toContain(domain.split('.')[0]);
}

describe('mvr mcp --base-url: private unless told otherwise', () => {
  it('verify_merchant sends a bucket, never the domain, and gives the plain lookup verdict; private: false sends the domain', async () => {
    for (const domain of [GOLD, UNAUDITED, NEIGHBOURS[0]!]) {
      let privately: Verdict | undefined;
      const { wire, lookups, statements } = await seen(async () => (privately = await verify({ domain })));
      expectNoDomain(wire);
      // The bits are read from the live statement first and the bucket sent once: none refused, none lengthened.
      expect(statements, domain).toBe(1);
      expect(
        lookups.map((l) => l.status),
        domain,
      ).toEqual([200]);
      expect(lookups[0]!.path).toMatch(BUCKET_PATH);
      let plainly: Verdict | undefined;
      const plain = await seen(async () => (plainly = await verify({ domain, private: false })));
      expect(plain.wire.some((r) => r.includes(`/v1/verify?domain=${domain}`))).toBe(true);
      expect(plain.lookups).toEqual([]);
      expect(privately).toMatchObject(sameVerdict(plainly!));
    }
    expect(await verify({ domain: GOLD })).toMatchObject({ valid: true, code: null, claims: { status: 'verified' }, record: null });
    expect(await verify({ domain: UNAUDITED })).toMatchObject({ valid: false, code: 'NEVER_AUDITED', record: { status: 'unverified' } });
  });

  it('verify_merchants: no domain on the wire, one fetch a bucket for the whole batch, and a verdict per domain equal to the plain form', async () => {
    let privately: BatchResult[] = [];
    const { wire, lookups, statements } = await seen(async () => (privately = await verifyBatch({ domains: BATCH })));
    expectNoDomain(wire);
    // The live statement read once, each bucket's answer fetched once, and fewer answers than domains: GOLD and its neighbours share one.
    expect(statements).toBe(1);
    for (const l of lookups) expect(l.path).toMatch(BUCKET_PATH);
    const answered = lookups.filter((l) => l.status === 200).map((l) => l.path);
    expect(new Set(lookups.map((l) => l.path)).size).toBe(lookups.length);
    expect(answered.length).toBeGreaterThan(0);
    expect(answered.length).toBeLessThanOrEqual(BATCH.length - 1 - NEIGHBOURS.length);
    // The key set is read once for the batch too.
    expect(wire.filter((r) => r.includes(KEY_SET_PATH))).toHaveLength(1);

    let plainly: BatchResult[] = [];
    const plain = await seen(async () => (plainly = await verifyBatch({ domains: BATCH, private: false })));
    expect(plain.lookups).toEqual([]);
    expect(plain.wire.some((r) => r.includes(GOLD))).toBe(true);

    expect(privately.map((r) => r.domain)).toEqual(BATCH);
    for (const [i, p] of plainly.entries()) {
      const mine = privately[i]!;
      if (p.problem) expect(mine.problem?.code, p.domain).toBe(p.problem.code);
      else
        expect({ ...mine.verification, record: mine.record }, p.domain).toMatchObject(
          sameVerdict({ ...p.verification!, record: p.record }),
        );
    }
    expect(privately.at(-1)).toMatchObject({ problem: { code: 'INVALID_DOMAIN' } });
    expect(privately.at(-2)).toMatchObject({ verification: { valid: true, code: null, entry: { record_fetched: false } }, record: null });
  });

  it('merchant_history says it has no private form, and the verify tools say they ask by bucket', async () => {
    const { tools } = await client.listTools();
    const described = Object.fromEntries(tools.map((t) => [t.name, t.description ?? '']));
    expect(described.merchant_history).toContain('no private form');
    for (const name of ['verify_merchant', 'verify_merchants']) expect(described[name]).toContain('unless you set private: false');
  });
});
