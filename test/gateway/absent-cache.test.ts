/**
 * "Never audited" is remembered per build, like verified records: a domain that a new build
 * adds is served as its record once that build is live, never as the old unverified answer.
 * A never-audited answer is issued at the start of the current second: the same bytes and ETag
 * all second long (issued_at at most a second old, inside the answer's own max-age of 60 s).
 */
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseKeySet } from '../../core/keyset.ts';
import { verifyRecordNode } from '../../core/signing.ts';
import { activeSigner, build, cleanup, makeProject, poll, sleep, startTestGateway } from './helpers.ts';

afterAll(cleanup);

describe('never-audited answers across a rebuild', () => {
  it('a domain added by a new build is served as its record after the swap', async () => {
    const project = await makeProject();
    const g = await startTestGateway(project);
    const domain = 'late-arrival.example';
    for (let i = 0; i < 3; i++) expect((await g.verify(domain)).json).toMatchObject({ status: 'unverified', domain });
    const audit = {
      domain,
      score: 88,
      sub_scores: { visibility: 90, recommendation_rate: 85, technical_readiness: 88 },
      evidence: { ok: true, coverage: 0.9, site_coverage: 0.8, engines_ran: ['chatgpt'], engines_skipped: [], blockers: [] },
      archetype: 'retailer',
      first_seen: '2026-10-01T00:00:00Z',
      last_audited_at: '2026-10-20T00:00:00Z',
    };
    await appendFile(join(project.auditsDir, 'verified.jsonl'), `${JSON.stringify(audit)}\n`);
    await build(project);
    const { value } = await poll(() => g.verify(domain), (r) => r.json?.status === 'verified', { timeoutMs: 5000, intervalMs: 50 });
    expect(value.json).toMatchObject({ domain, status: 'verified', tier: 'gold', score: 88 });
    expect(typeof value.json.signature).toBe('string');
  });
});

describe('never-audited answers within a second', () => {
  it('are reused for the same domain (same bytes and ETag), renewed after a second, and never shared between domains', async () => {
    const project = await makeProject();
    const g = await startTestGateway(project);
    const first = await g.verify('burst-a.example');
    const again = await g.verify('burst-a.example');
    const other = await g.verify('burst-b.example');
    expect(first.json).toMatchObject({ status: 'unverified', domain: 'burst-a.example' });
    expect(other.json).toMatchObject({ status: 'unverified', domain: 'burst-b.example' });
    expect(first.json.issued_at).toMatch(/\.000Z$/); // the start of its second
    // Reused only within a second of its issued_at.
    if (Date.now() - Date.parse(first.json.issued_at) < 900) {
      expect(again.bytes.equals(first.bytes)).toBe(true);
      expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    }
    expect(Date.now() - Date.parse(again.json.issued_at)).toBeLessThan(1000 + 100);
    await sleep(1100);
    const later = await g.verify('burst-a.example');
    expect(Date.parse(later.json.issued_at)).toBeGreaterThan(Date.parse(first.json.issued_at));
    expect(later.headers.get('etag')).not.toBe(first.headers.get('etag'));
    // A conditional request with the reused answer's ETag gets 304 while it is reused.
    const fresh = await g.verify('burst-c.example');
    const conditional = await g.verify('burst-c.example', { headers: { 'if-none-match': fresh.headers.get('etag')! } });
    if (Date.now() - Date.parse(fresh.json.issued_at) < 900) expect(conditional.status).toBe(304);
  });
});

