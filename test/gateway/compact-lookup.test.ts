/**
 * `GET /v1/lookup` and `GET /v1/lookup/{bits}/{hex}`: compact private lookups against the real
 * gateway over the sample build. The client fetches the statement first and learns the bits there;
 * every audited domain gets, from its bucket's answer, the verdict its record has (its entry, and the
 * hash the record's bytes have), a never-audited one its proven absence; every answer is one size,
 * sent as it is even to a client that accepts gzip and brotli; bits other than the build's are
 * PREFIX_LENGTH_MISMATCH, hex that is not those bits INVALID_PREFIX; a hex prefix alone (the
 * retired JSON route) is not found.
 */
import { createHash } from 'node:crypto';
import {
  bucketHex,
  bucketOf,
  gatewaySource,
  recordMatchesEntry,
  verifyCompactAnswer,
  verifyOnlineCompact,
} from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { publishedKeySet, readCurrentRecords } from '../support/outputs.ts';
import { makeProject } from '../support/project.ts';

afterAll(cleanup);

const NEVER = ['never-audited-private.example', 'another-unknown-shop.example'];
const hashOf = (domain: string) => new Uint8Array(createHash('sha256').update(domain).digest());

describe('compact private lookups', async () => {
  const project = await makeProject();
  const records = await readCurrentRecords(project.recordsDir);
  const { keySet } = await publishedKeySet(project);
  const gw = await startTestGateway(project, { rateLimitPerMinute: 10_000 });
  const head = await gw.request('/v1/lookup');
  const { statement } = head.json;
  const bits = statement.lookup.bits as number;
  const pathOf = (domain: string) => `/v1/lookup/${bits}/${bucketHex(bucketOf(hashOf(domain), bits), bits)}`;
  const ask = (domain: string) => gw.request(pathOf(domain), { headers: { 'accept-encoding': 'gzip, br' } });

  it('answers each domain from its entry, one size, as the bytes are', async () => {
    expect(head.status).toBe(200);
    const sizes = new Set<number>();
    for (const [domain, { record, text }] of records) {
      const r = await ask(domain);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-encoding')).toBeNull();
      expect(r.headers.get('content-type')).toBe('application/octet-stream');
      expect(r.headers.get('cache-control')).toContain('no-transform');
      sizes.add(r.bytes.length);
      const v = verifyCompactAnswer({ domain, answer: new Uint8Array(r.bytes), statement, keySet });
      expect({ domain, code: v.code }).toEqual({ domain, code: null });
      expect(v.entry?.status).toBe(record.status);
      // The full record, fetched another way, is the one the entry commits to.
      expect(recordMatchesEntry(v.entry!, record, Buffer.from(text.trimEnd()))).toBeNull();
      expect(recordMatchesEntry(v.entry!, { ...record, tier: record.tier === 'gold' ? 'silver' : 'gold' })).toMatchObject({
        code: 'RECORD_NOT_IN_MAP',
      });
    }
    for (const domain of NEVER) {
      const r = await ask(domain);
      sizes.add(r.bytes.length);
      expect(verifyCompactAnswer({ domain, answer: new Uint8Array(r.bytes), statement, keySet }).code).toBe('NEVER_AUDITED');
    }
    expect([...sizes]).toEqual([statement.lookup.bucket_bytes]);
    const logged = gw.logs.map((l) => JSON.stringify(l)).join('\n');
    for (const domain of [...records.keys(), ...NEVER]) expect(logged).not.toContain(domain);
  });

  it("through the package's online client: the statement first, then the bucket once", async () => {
    const source = gatewaySource({ baseUrl: gw.url, apiKey: gw.key });
    const [domain, { record }] = [...records][0]!;
    const before = gw.logs.length;
    expect(await verifyOnlineCompact({ domain, source })).toMatchObject({ code: null, entry: { domain, status: record.status } });
    expect(await verifyOnlineCompact({ domain: NEVER[0]!, source })).toMatchObject({ code: 'NEVER_AUDITED', entry: null });
    const paths = gw.logs
      .slice(before)
      .map((l) => (l as { path?: string }).path)
      .filter((p) => p?.startsWith('/v1/lookup'));
    expect(paths).toEqual(['/v1/lookup', pathOf(domain), '/v1/lookup', pathOf(NEVER[0]!)]);
  });

  it('is one quota unit, key-gated, and answers 304 to its entity tag', async () => {
    const remaining = (r: { headers: Headers }) => Number(/;r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1]);
    const a = await ask(NEVER[0]!);
    const b = await ask(NEVER[1]!);
    expect(remaining(a) - remaining(b)).toBe(1);
    expect((await gw.request(pathOf(NEVER[0]!), { key: null })).status).toBe(401);
    expect((await gw.request('/v1/lookup', { key: null })).status).toBe(401);
    const again = await gw.request(pathOf(NEVER[0]!), { headers: { 'if-none-match': a.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });

  it('refuses other bits with PREFIX_LENGTH_MISMATCH, and hex that is not those bits with INVALID_PREFIX', async () => {
    const hex = bucketHex(0, bits);
    expectProblem(await gw.request(`/v1/lookup/${bits + 1}/${hex}0`), 400, 'PREFIX_LENGTH_MISMATCH');
    expectProblem(await gw.request(`/v1/lookup/${bits + 4}/${hex}0`), 400, 'PREFIX_LENGTH_MISMATCH');
    for (const bad of [`${hex}0`, 'G'.repeat(hex.length), 'F'.repeat(hex.length), (2 ** (4 * hex.length) - 1).toString(16)])
      if (bucketHex(Number.parseInt(bad, 16) >> (4 * hex.length - bits), bits) !== bad)
        expectProblem(await gw.request(`/v1/lookup/${bits}/${bad}`), 400, 'INVALID_PREFIX');
  });

  it('has no other form: a hex prefix alone (the retired JSON route) is 404 NOT_FOUND, with or without a key', async () => {
    const prefix = createHash('sha256').update(NEVER[0]!).digest('hex').slice(0, 2);
    expectProblem(await gw.request(`/v1/lookup/${prefix}`), 404, 'NOT_FOUND');
    expectProblem(await gw.request(`/v1/lookup/${prefix}`, { key: null }), 404, 'NOT_FOUND');
  });
});
