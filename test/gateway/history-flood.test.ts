/**
 * History at a bounded cost, from the outside: thirteen kept builds on the real gateway, a flood
 * of `GET /v1/history` calls, and the metrics scrape counting whole domain maps read. Each kept
 * build's map is read and checked once, to index it; after that a history call reads one small
 * chunk of each map (checked against that index) and the records it lists, never a whole map
 * again. A map that changed under the gateway is STORE_UNAVAILABLE, never a shorter history.
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DOMAIN_MAP_FILE } from '../../core/layout.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { parseMetrics, sampleOf } from '../support/metrics-text.ts';
import { placeIn } from '../support/packs.ts';
import { build, makeProject } from '../support/project.ts';

afterAll(cleanup);

const AUDITED = 'flood-shop.example';
const NEVER = 'never-audited-flood.example';
const KEPT = 13;

/** One audit line of `domain`, dated before the first build. */
const audit = (domain: string) =>
  JSON.stringify({
    domain,
    score: 70,
    sub_scores: { visibility: 70, recommendation_rate: 70, technical_readiness: 70 },
    evidence: { ok: true, coverage: 0.8, site_coverage: 0.7, engines_ran: ['chatgpt'], engines_skipped: [], blockers: [] },
    archetype: 'd2c_brand',
    first_seen: '2025-03-14T09:30:00Z',
    last_audited_at: '2026-10-15T12:00:00Z',
  });

describe('a history flood at 13 kept builds', async () => {
  const project = await makeProject({
    samples: false,
    build: false,
    files: { 'a.jsonl': `${audit(AUDITED)}\n${audit('other-shop.example')}\n` },
  });
  for (let month = 0; month < KEPT; month++) await build(project, { now: Date.UTC(2026, 10 + month, 1), keep: KEPT });
  const g = await startTestGateway(project, { metrics: { listen: { host: '127.0.0.1', port: 0 } } });
  const mapLoads = async () => sampleOf(parseMetrics(await (await fetch(g.gateway.metricsUrl!)).text()), 'mvr_kept_map_loads_total');
  const builds = ((await g.request('/v1/builds')).json as { builds: { id: string }[] }).builds.map((b) => b.id);

  it('reads each kept build’s whole map once, then never again however many calls come', async () => {
    expect(builds).toHaveLength(KEPT);
    expect(await mapLoads()).toBe(0);
    const first = (await g.request(`/v1/history?domain=${AUDITED}`)).json as { entries: { build: string }[] };
    expect(first.entries.map((e) => e.build)).toEqual(builds);
    // The live build's map is the one the gateway serves from; the twelve others are read once.
    expect(await mapLoads()).toBe(KEPT - 1);
    const flood = await Promise.all(Array.from({ length: 60 }, (_, i) => g.request(`/v1/history?domain=${i % 2 ? AUDITED : NEVER}`)));
    expect(flood.map((r) => r.status)).toEqual(flood.map(() => 200));
    expect(flood.map((r) => (r.json as { entries: unknown[] }).entries.length)).toEqual(flood.map((_, i) => (i % 2 ? KEPT : 0)));
    expect((await g.request(`/v1/verify?domain=${AUDITED}&build=${builds[KEPT - 1]}`)).json).toMatchObject({ domain: AUDITED });
    expect((await g.request(`/v1/verify?domain=${NEVER}&build=${builds[KEPT - 1]}`)).json).toMatchObject({ status: 'unverified' });
    expect(await mapLoads()).toBe(KEPT - 1);
  });

  it('a kept map that changed under the gateway is STORE_UNAVAILABLE, never a history without that build', async () => {
    const dir = join(project.recordsDir, 'builds', builds[5]!);
    const map = join(dir, DOMAIN_MAP_FILE);
    const record = (await placeIn(dir, AUDITED)).file;
    const leaves = await readFile(map);
    await rename(map, `${map}.away`);
    await rename(record, `${record}.away`);
    try {
      // The domain's leaf and its record's pack both gone (a map of as many other leaves): only the index of the checked map can tell.
      await writeFile(map, Buffer.alloc(leaves.length));
      expectProblem(await g.request(`/v1/history?domain=${AUDITED}`), 503, 'STORE_UNAVAILABLE');
      await rm(map);
      expectProblem(await g.request(`/v1/history?domain=${AUDITED}`), 503, 'STORE_UNAVAILABLE');
    } finally {
      await rm(map, { force: true });
      await rename(`${map}.away`, map);
      await rename(`${record}.away`, record);
    }
    expect(((await g.request(`/v1/history?domain=${AUDITED}`)).json as { entries: unknown[] }).entries).toHaveLength(KEPT);
    expect(await mapLoads()).toBe(KEPT - 1);
  });
});
