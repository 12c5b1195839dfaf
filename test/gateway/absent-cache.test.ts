/**
 * "Never audited" is remembered per build, like verified records: a domain that a new build
 * adds is served as its record once that build is live, never as the old unverified answer.
 * A never-audited answer is issued at the start of the current second: the same bytes and ETag
 * all second long (issued_at at most a second old, inside the answer's own max-age of 60 s).
 * The gateway's clock is the test's, so "within a second" and "the next second" are certain.
 */
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { build, makeProject } from '../support/project.ts';
import { poll } from '../support/wait.ts';

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
    const { value } = await poll(
      () => g.verify(domain),
      (r) => r.json?.status === 'verified',
      { timeoutMs: 5000, intervalMs: 50 },
    );
    expect(value.json).toMatchObject({ domain, status: 'verified', tier: 'gold', score: 88 });
    expect(typeof value.json.signature).toBe('string');
  });
});

/** A clock the test moves by hand (epoch ms), given to the gateway as its `now`. */
function handClock(start: number): { now: () => number; set(ms: number): void } {
  let t = start;
  return { now: () => t, set: (ms) => void (t = ms) };
}
const SECOND = Date.parse('2026-11-20T10:00:00.000Z');

describe('never-audited answers within a second', () => {
  it('are reused for the same domain (same bytes and ETag), renewed after a second, and never shared between domains', async () => {
    const clock = handClock(SECOND + 150);
    const project = await makeProject();
    const g = await startTestGateway(project, { now: clock.now });
    const first = await g.verify('burst-a.example');
    clock.set(SECOND + 900);
    const again = await g.verify('burst-a.example');
    const other = await g.verify('burst-b.example');
    expect(first.json).toMatchObject({ status: 'unverified', domain: 'burst-a.example', issued_at: '2026-11-20T10:00:00.000Z' }); // the start of its second
    expect(other.json).toMatchObject({ status: 'unverified', domain: 'burst-b.example' });
    expect(other.headers.get('etag')).not.toBe(first.headers.get('etag'));
    expect(again.bytes.equals(first.bytes)).toBe(true);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    // A conditional request with the reused answer's ETag gets 304 while it is reused...
    const conditional = await g.verify('burst-a.example', { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(conditional.status).toBe(304);
    // ...and a new answer once the next second begins.
    clock.set(SECOND + 1000);
    const later = await g.verify('burst-a.example');
    expect(later.json.issued_at).toBe('2026-11-20T10:00:01.000Z');
    expect(later.headers.get('etag')).not.toBe(first.headers.get('etag'));
    const stale = await g.verify('burst-a.example', { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(stale.status).toBe(200);
  });
});
