/**
 * Verify-before-serve: a stored record (its range of its pack) that does not parse, is not the record asked
 * for, is unsigned in a signed deployment, or whose signature does not verify against the served
 * key set is never served: 503 UNAVAILABLE, and the refusal is logged. Each case edits the record
 * of a domain no request has touched yet, so the verified-bytes cache cannot mask the change.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '#shared';
import { cleanup, startTestGateway, type TestGateway, useGateway, waitForLog } from '../support/gateway.ts';
import { expectNoSecretsInLogs, expectProblem } from '../support/gateway-expect.ts';
import { editLiveRecord, liveRecordBytes, replaceLiveRecord, rewriteUnsignedRecord } from '../support/packs.ts';
import { makeProject, type Project } from '../support/project.ts';

let project: Project;
let g: TestGateway;

useGateway((t) => ({ project, g } = t));
afterAll(cleanup);

function editRecord(domain: string, edit: (record: Record<string, unknown>) => string): Promise<Buffer> {
  return editLiveRecord(project, domain, edit);
}

async function expectRefused(domain: string): Promise<void> {
  const r = await g.verify(domain);
  expectProblem(r, 503, 'UNAVAILABLE');
  expect(r.text).not.toContain('"score"');
  const line = await waitForLog(g, (l) => l.msg === 'record rejected' && l.domain === domain);
  expect(line.level).toBe('error');
  expect(typeof line.reason).toBe('string');
  // Still refused on a second ask: nothing bad was cached, nothing was synthesized.
  expectProblem(await g.verify(domain), 503, 'UNAVAILABLE');
}

describe('a record file that must not be served', () => {
  it('serves an untouched record (control)', async () => {
    const r = await g.verify('gadget-hub.example');
    expect(r.status).toBe(200);
    expect(r.bytes.equals(await liveRecordBytes(project, 'gadget-hub.example'))).toBe(true);
  });

  it('tampered (score changed, signature kept): 503 UNAVAILABLE and a "record rejected" error line', async () => {
    const domain = 'acme-outdoor.example';
    await editRecord(domain, (r) => {
      expect(r.score).toBe(93.5);
      expect(typeof r.signature).toBe('string');
      return canonicalJson({ ...r, score: 99 });
    });
    await expectRefused(domain);
    const line = await waitForLog(g, (l) => l.msg === 'record rejected' && l.domain === domain);
    expect(String(line.reason)).toMatch(/BAD_SIGNATURE/);
  });

  it('tampered without touching the score (tier upgraded, same bytes otherwise)', async () => {
    const domain = 'harbor-furniture.example';
    await editRecord(domain, (r) => canonicalJson({ ...r, tier: 'gold' }));
    await expectRefused(domain);
  });

  it('re-serialized but semantically equal (not canonical bytes): 503, its bytes are not the ones its map commits to', async () => {
    // Members in another order change the bytes, not the record: the signature, over the canonical
    // form, still verifies, but the build's map names the record's exact bytes (its entry's record_hash).
    const domain = 'greenleaf-tea.example';
    await editRecord(domain, (r) => JSON.stringify(Object.fromEntries(Object.entries(r).reverse())));
    await expectRefused(domain);
    const line = await waitForLog(g, (l) => l.msg === 'record rejected' && l.domain === domain);
    expect(line.kind).toBe('not_in_map');
  });

  it('corrupt (not JSON): 503 UNAVAILABLE', async () => {
    const domain = 'indigo-apparel.example';
    await replaceLiveRecord(project, domain, 'this is not JSON {');
    await expectRefused(domain);
  });

  it('blank (nothing but spaces where its bytes were): 503 UNAVAILABLE', async () => {
    const domain = 'juniper-pets.example';
    await replaceLiveRecord(project, domain, '');
    await expectRefused(domain);
  });

  it('unsigned record in a signed deployment: 503 UNAVAILABLE', async () => {
    const domain = 'kite-electronics.example';
    await editRecord(domain, ({ key_id: _k, signature: _s, ...rest }) => canonicalJson(rest));
    await expectRefused(domain);
  });

  it("another domain's valid, signed record in its place: 503 UNAVAILABLE", async () => {
    const domain = 'corner-bakery.example';
    const other = await liveRecordBytes(project, 'bluebird-books.example');
    expect(other.length).toBeLessThanOrEqual((await liveRecordBytes(project, domain)).length);
    await replaceLiveRecord(project, domain, other);
    await expectRefused(domain);
    // The other domain itself is untouched and still served.
    const r = await g.verify('bluebird-books.example');
    expect(r.status).toBe(200);
    expect(r.bytes.equals(other)).toBe(true);
  });

  it('signed by a key that is not in the served key set: 503 UNAVAILABLE', async () => {
    const domain = 'single-file-shop.example';
    await editRecord(domain, (r) => canonicalJson({ ...r, key_id: 'x'.repeat(String(r.key_id).length) }));
    await expectRefused(domain);
  });

  it('a record that does not match the schema (a member it does not know): 503 UNAVAILABLE', async () => {
    const domain = 'year-end.example';
    // Renamed one letter shorter, so it fits where the record was.
    await editRecord(domain, ({ archetype, ...r }) => canonicalJson({ ...r, archetyp: archetype }));
    await expectRefused(domain);
  });

  it('a fresh gateway over the tampered files refuses them too (nothing depends on the cache)', async () => {
    const fresh = await startTestGateway(project);
    try {
      for (const domain of ['acme-outdoor.example', 'indigo-apparel.example', 'kite-electronics.example', 'corner-bakery.example']) {
        expectProblem(await fresh.verify(domain), 503, 'UNAVAILABLE');
      }
      expect((await fresh.verify('gadget-hub.example')).status).toBe(200);
      expectNoSecretsInLogs(fresh);
    } finally {
      await fresh.close();
    }
  });
});

describe('an unsigned deployment (no signing key: empty key set)', () => {
  it('is refused unless the gateway is told to serve unsigned builds: an empty key set switches nothing on', async () => {
    const unsigned = await makeProject({ sign: false });
    const u = await startTestGateway(unsigned);
    try {
      const r = await u.verify('gadget-hub.example');
      expectProblem(r, 503, 'STORE_UNAVAILABLE');
      const refused = u.logs.find((l) => l.msg?.startsWith('build refused'));
      expect(refused?.reason).toMatch(/does not verify: UNSIGNED .*--unsigned/);
    } finally {
      await u.close();
    }
  });

  it('with --unsigned: serves its unsigned records as stored, and refuses a signed record it cannot check', async () => {
    const unsigned = await makeProject({ sign: false });
    // A record signed elsewhere (by a key this deployment does not publish), in its pack.
    const signed = await liveRecordBytes(project, 'fictional-candles.myshopify.com');
    await rewriteUnsignedRecord(unsigned, 'fictional-candles.myshopify.com', signed);
    const u = await startTestGateway(unsigned, { trust: { unsigned: true } });
    try {
      const ks = await u.request('/.well-known/merchant-verify-keys.json', { key: null });
      expect(ks.json).toEqual({ keys: [] });
      const r = await u.verify('gadget-hub.example');
      expect(r.status).toBe(200);
      expect(r.bytes.equals(await liveRecordBytes(unsigned, 'gadget-hub.example'))).toBe(true);
      expect('signature' in r.json || 'key_id' in r.json).toBe(false);
      // ...is not served.
      expectProblem(await u.verify('fictional-candles.myshopify.com'), 503, 'UNAVAILABLE');
      expectNoSecretsInLogs(u);
    } finally {
      await u.close();
    }
  });
});
