/**
 * Verify-before-serve: a record file that does not parse, is not the record asked
 * for, is unsigned in a signed deployment, or whose signature does not verify against the served
 * key set is never served: 503 UNAVAILABLE, and the refusal is logged. Each case edits the file
 * of a domain no request has touched yet, so the verified-bytes cache cannot mask the change.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { canonicalJson } from '@merchant-verify/verifier/internal/issuer';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway, type TestGateway, useGateway, waitForLog } from '../support/gateway.ts';
import { expectNoSecretsInLogs, expectProblem } from '../support/gateway-expect.ts';
import { liveRecordFile, makeProject, type Project } from '../support/project.ts';

let project: Project;
let g: TestGateway;

useGateway((t) => ({ project, g } = t));
afterAll(cleanup);

async function editRecord(domain: string, edit: (record: Record<string, unknown>) => string): Promise<void> {
  const file = liveRecordFile(project, domain);
  const record = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  await writeFile(file, edit(record));
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
    expect(r.bytes.equals(await readFile(liveRecordFile(project, 'gadget-hub.example')))).toBe(true);
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

  it('re-serialized but semantically equal (not canonical bytes) is still served only if it verifies', async () => {
    // Pretty-printing changes the bytes, not the record: the signature covers the canonical form,
    // so the record still verifies and is served as stored.
    const domain = 'greenleaf-tea.example';
    await editRecord(domain, (r) => JSON.stringify(r, null, 2));
    const r = await g.verify(domain);
    expect(r.status).toBe(200);
    expect(r.bytes.equals(await readFile(liveRecordFile(project, domain)))).toBe(true);
  });

  it('corrupt (not JSON): 503 UNAVAILABLE', async () => {
    const domain = 'indigo-apparel.example';
    await writeFile(liveRecordFile(project, domain), 'this is not JSON {');
    await expectRefused(domain);
  });

  it('empty file: 503 UNAVAILABLE', async () => {
    const domain = 'juniper-pets.example';
    await writeFile(liveRecordFile(project, domain), '');
    await expectRefused(domain);
  });

  it('unsigned record in a signed deployment: 503 UNAVAILABLE', async () => {
    const domain = 'kite-electronics.example';
    await editRecord(domain, ({ key_id: _k, signature: _s, ...rest }) => canonicalJson(rest));
    await expectRefused(domain);
  });

  it("another domain's valid, signed record in the file: 503 UNAVAILABLE", async () => {
    const domain = 'corner-bakery.example';
    const other = await readFile(liveRecordFile(project, 'bluebird-books.example'));
    await writeFile(liveRecordFile(project, domain), other);
    await expectRefused(domain);
    // The other domain itself is untouched and still served.
    const r = await g.verify('bluebird-books.example');
    expect(r.status).toBe(200);
    expect(r.bytes.equals(other)).toBe(true);
  });

  it('signed by a key that is not in the served key set: 503 UNAVAILABLE', async () => {
    const domain = 'single-file-shop.example';
    await editRecord(domain, (r) => canonicalJson({ ...r, key_id: 'not-a-published-key' }));
    await expectRefused(domain);
  });

  it('a record that does not match the schema (extra member): 503 UNAVAILABLE', async () => {
    const domain = 'year-end.example';
    await editRecord(domain, (r) => canonicalJson({ ...r, expires_at: '2027-01-01T00:00:00.000Z' }));
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
    const u = await startTestGateway(unsigned, { trust: { unsigned: true } });
    try {
      const ks = await u.request('/.well-known/merchant-verify-keys.json', { key: null });
      expect(ks.json).toEqual({ keys: [] });
      const r = await u.verify('gadget-hub.example');
      expect(r.status).toBe(200);
      expect(r.bytes.equals(await readFile(liveRecordFile(unsigned, 'gadget-hub.example')))).toBe(true);
      expect('signature' in r.json || 'key_id' in r.json).toBe(false);
      // A record signed elsewhere (by a key this deployment does not publish) is not served.
      const signed = await readFile(liveRecordFile(project, 'fictional-candles.myshopify.com'));
      await writeFile(liveRecordFile(unsigned, 'fictional-candles.myshopify.com'), signed);
      expectProblem(await u.verify('fictional-candles.myshopify.com'), 503, 'UNAVAILABLE');
      expectNoSecretsInLogs(u);
    } finally {
      await u.close();
    }
  });
});
