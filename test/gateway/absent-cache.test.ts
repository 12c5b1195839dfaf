/**
 * "Never audited" is remembered per build, like verified records: a domain that a new build
 * adds is served as its record once that build is live, never as the old unverified answer.
 */
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { build, cleanup, makeProject, poll, startTestGateway } from './helpers.ts';

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
