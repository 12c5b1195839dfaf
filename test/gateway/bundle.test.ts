/**
 * `GET /v1/bundle`: one document that proves a domain's answer offline. A bundle from a real
 * gateway over a logged build verifies with the portable verifier (a record, and a never-audited
 * answer), forged ones are refused with their codes, and the usual key, domain, quota and cache
 * rules hold.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verdictOf, verifyBundle } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleSchema } from '../../core/schemas/bundle.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { DEC, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { build, GOLD, makeProject, UNAUDITED } from '../support/project.ts';

afterAll(cleanup);

const OTHER = 'gadget-hub.example';
type Json = Record<string, any>;

describe('GET /v1/bundle', async () => {
  // Two logged builds, so the live build's statement is not the log's first entry.
  const p = await loggedProject();
  await build(p, { now: NOV });
  await build(p, { now: DEC });
  const g = await startTestGateway({ ...p, apiKeysFile: join(p.keysDir, 'api-keys.json') }, { rateLimitPerMinute: 1000 });
  const vkey = (await readFile(vkeyFile(p), 'utf8')).trim();
  const keySet = JSON.parse(await readFile(p.keySetFile, 'utf8')) as unknown;
  const log = { vkey };
  const bundleOf = async (domain: string) => (await g.request(`/v1/bundle?domain=${domain}`)).json as Json;
  const gold = await bundleOf(GOLD);
  const never = await bundleOf(UNAUDITED);
  const check = (bundle: unknown, domain = GOLD) => verdictOf(verifyBundle({ bundle, domain, keySet, log, now: DEC }));

  it("carries the record exactly as /v1/verify serves it, its place in the build's map, the statement and its log proof", async () => {
    const r = await g.request(`/v1/bundle?domain=https://WWW.${GOLD}/x`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('cache-control')).toBe('public, max-age=60, s-maxage=300');
    expect(bundleSchema.safeParse(r.json).success).toBe(true);
    expect(r.json).toEqual(gold);
    expect(gold).toMatchObject({ schema: 'https://merchant-verify.example/schemas/bundle/v1', domain: GOLD, absence: null });
    expect(gold.record).toEqual(JSON.parse((await g.verify(GOLD)).text));
    expect(gold.statement_proof).toMatch(/^c2sp.org\/tlog-proof@v1\n/);
    expect((await g.request(`/v1/bundle?domain=${GOLD}`, { headers: { 'if-none-match': r.headers.get('etag')! } })).status).toBe(304);
    expect(check(gold)).toEqual({ valid: true, code: null, message: null });
    const v = verifyBundle({ bundle: gold, keySet, log, now: DEC });
    expect(v).toMatchObject({ code: null, build: gold.statement.build, place: { valid: true }, statement: { valid: true } });
  });

  it('a never-audited answer comes with its absence proof, of the same statement and log proof; it verifies as NEVER_AUDITED', () => {
    expect(bundleSchema.safeParse(never).success).toBe(true);
    expect(never).toMatchObject({ domain: UNAUDITED, place: null, record: { status: 'unverified' } });
    expect(never.absence.statement).toEqual(never.statement);
    expect(never.absence.statement_proof).toBe(never.statement_proof);
    expect(check(never, UNAUDITED)).toMatchObject({ valid: false, code: 'NEVER_AUDITED' });
  });

  it('forged bundles are refused with their codes', async () => {
    const other = await bundleOf(OTHER);
    const forged = (change: (b: Json) => void, from: Json = gold) => {
      const b = structuredClone(from);
      change(b);
      return b;
    };
    // Another domain's record (validly signed) in this domain's bundle.
    expect(check(forged((b) => (b.record = other.record))).code).toBe('DOMAIN_MISMATCH');
    // Another domain's whole bundle, asked as this domain's.
    expect(check(other).code).toBe('DOMAIN_MISMATCH');
    // The place: another index, another leaf, or a place that is no place.
    expect(check(forged((b) => (b.place.index = (b.place.index + 1) % b.statement.domain_map.size))).code).toBe('RECORD_NOT_IN_MAP');
    expect(check(forged((b) => (b.place = other.place))).code).toBe('RECORD_NOT_IN_MAP');
    expect(check(forged((b) => (b.place = null))).code).toBe('MALFORMED_BUNDLE');
    expect(check(forged((b) => (b.schema = 'https://merchant-verify.example/schemas/verification/v1'))).code).toBe('MALFORMED_BUNDLE');
    // The statement's signature broken (its map head changed, so the record's place would follow).
    expect(check(forged((b) => (b.statement.records += 1))).code).toBe('STATEMENT_NOT_SIGNED');
    // The statement's log proof from another checkpoint: November's build's statement proof.
    const nov = (await g.request(`/v1/absence?domain=${UNAUDITED}&build=${await novBuild()}`)).json as Json;
    expect(check(forged((b) => (b.statement_proof = nov.statement_proof))).code).toBe('STATEMENT_NOT_LOGGED');
    expect(check(forged((b) => (b.statement_proof = null))).code).toBe('STATEMENT_NOT_LOGGED');
    // A never-audited bundle whose absence proof is of another statement.
    expect(
      check(
        forged((b) => (b.absence.statement = nov.statement), never),
        UNAUDITED,
      ).code,
    ).toBe('MALFORMED_BUNDLE');
    // Without the log's key, the statement proof is not asked for: the map and signatures alone.
    expect(verdictOf(verifyBundle({ bundle: forged((b) => (b.statement_proof = null)), keySet }))).toMatchObject({ valid: true });
  });

  it('the key first (401 before 400), then the domain; one quota unit a request; in the OpenAPI document, with its schema', async () => {
    expectProblem(await g.request('/v1/bundle?domain=co.uk', { key: null }), 401, 'UNAUTHORIZED');
    expectProblem(await g.request('/v1/bundle?domain=co.uk'), 400, 'INVALID_DOMAIN');
    expectProblem(await g.request('/v1/bundle'), 400, 'INVALID_DOMAIN');
    expectProblem(await g.request(`/v1/bundle?domain=${GOLD}&build=${await novBuild()}`), 400, 'INVALID_REQUEST');
    const left = (r: { headers: Headers }) => Number(/r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1]);
    const a = await g.request(`/v1/bundle?domain=${GOLD}`);
    const b = await g.request(`/v1/bundle?domain=${GOLD}`);
    expect(left(a) - left(b)).toBe(1);
    const doc = (await g.request('/openapi.json', { key: null })).json as Json;
    expect(Object.keys(doc.paths['/v1/bundle'].get.responses)).toEqual(expect.arrayContaining(['200', '304', '400', '401', '503']));
    expect(doc.components.schemas).toHaveProperty('Bundle');
    const schema = await g.request('/schemas/bundle/v1', { key: null });
    expect(schema.status).toBe(200);
    expect(schema.json).toMatchObject({ $id: 'https://merchant-verify.example/schemas/bundle/v1' });
  });

  it('MCP: verify_merchant with include_proof returns the bundle in its structured result, and verifyBundle accepts it', async () => {
    const client = await connectHttpClient(g.url, g.key);
    try {
      const call = async (domain: string, include_proof: boolean) =>
        ((await client.callTool({ name: 'verify_merchant', arguments: { domain, include_proof } })) as { structuredContent: Json })
          .structuredContent;
      const audited = await call(GOLD, true);
      expect(bundleSchema.safeParse(audited.bundle).success).toBe(true);
      expect(audited.bundle.record).toEqual(audited.record);
      expect(check(audited.bundle)).toEqual({ valid: true, code: null, message: null });
      const unaudited = await call(UNAUDITED, true);
      expect(check(unaudited.bundle, UNAUDITED).code).toBe('NEVER_AUDITED');
      expect(await call(GOLD, false)).not.toHaveProperty('bundle');
    } finally {
      await client.close();
    }
  });

  it('a build without a log key gives statement_proof null: the map and signatures verify, a log check is refused', async () => {
    const plain = await makeProject();
    const gw = await startTestGateway(plain);
    const bundle = (await gw.request(`/v1/bundle?domain=${GOLD}`)).json as Json;
    expect(bundle.statement_proof).toBeNull();
    const plainKeys = JSON.parse(await readFile(plain.keySetFile, 'utf8')) as unknown;
    expect(verdictOf(verifyBundle({ bundle, keySet: plainKeys }))).toMatchObject({ valid: true });
    expect(verifyBundle({ bundle, keySet: plainKeys, log }).code).toBe('STATEMENT_NOT_LOGGED');
  });

  /** The November build's id: the kept build after the live one. */
  async function novBuild(): Promise<string> {
    const builds = ((await g.request('/v1/builds')).json as { builds: { id: string }[] }).builds;
    return builds[1]!.id;
  }
});
