/**
 * An http(s) origin that turns hostile never takes the gateway down: a manifest of 2 GB (sent
 * lazily, never held by the test) is refused at its size limit, one that drips a byte at a time at
 * its total deadline (a setting shortened here), and a refresh that hangs is never stacked. Each
 * time the typed refusal is logged (once a minute per kind and limit) and counted, the build served
 * before stays served, health answers, and the gateway takes the origin back once it answers well.
 */
import { realpath } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_LINK } from '../../core/layout.ts';
import { READ_LIMITS } from '../../core/limits.ts';
import { cleanup, startTestGateway, type TestGateway, trustingProject, waitForLog } from '../support/gateway.ts';
import { parseMetrics, sampleOf } from '../support/metrics-text.ts';
import { makeProject, type Project } from '../support/project.ts';
import { drippingBody, endlessBody, type StaticOrigin, startStaticOrigin } from '../support/static-origin.ts';
import { waitFor } from '../support/wait.ts';

const MANIFEST = '/manifest.json';
const TWO_GB = 2 * 1024 ** 3;
/** A bound on the memory the test process (gateway included) may gain, far below the 2 GB sent and far above the 1 MiB read. */
const MEMORY_BOUND = 256 * 1024 * 1024;

let project: Project;
let origin: StaticOrigin;
let g: TestGateway;

beforeAll(async () => {
  project = await makeProject();
  origin = await startStaticOrigin(await realpath(join(project.recordsDir, CURRENT_LINK)));
  g = await startTestGateway(project, {
    trust: await trustingProject(project),
    records: { url: origin.url, deadlineMs: 500 },
    metrics: { listen: { host: '127.0.0.1', port: 0 } },
  });
});
afterAll(async () => {
  await cleanup();
  await origin.stop();
});

const refusedRead = (file: string, limit: string) => (l: Record<string, unknown>) =>
  l.msg === 'store read refused at its limit; what was served before stays served' && l.file === file && l.limit === limit;

/** The origin answers its manifest well again, and the gateway says it is healthy once it has read it. */
async function recovers(): Promise<void> {
  origin.answer(MANIFEST, null);
  await waitFor(async () => (await g.request('/healthz')).json?.status === 'ok', 'the gateway healthy again');
  expect((await g.verify('tier-boundary-1.example')).status).toBe(200);
}

/** Health answers, degraded, still naming the build it serves; a record not asked for before is read from the origin and served. */
async function servesThePreviousBuild(domain: string): Promise<void> {
  const health = await g.request('/healthz');
  expect(health.status).toBe(200);
  expect(health.json).toMatchObject({ status: 'degraded', records: { ok: false } });
  expect(health.json.records.build).not.toBeNull();
  const r = await g.verify(domain);
  expect(r.status).toBe(200);
  expect(r.json.domain).toBe(domain);
}

describe.sequential('a hostile http(s) origin', () => {
  it('a 2 GB manifest sent chunked: refused at the manifest size limit, unread past it; the previous build served; then recovers', async () => {
    const before = process.memoryUsage().rss;
    const huge = endlessBody(TWO_GB);
    origin.answer(MANIFEST, huge);
    await waitForLog(g, refusedRead('manifest', 'size'), 5000);
    // The gateway hung up after the limit; the origin never sent the rest.
    await huge.ended;
    await servesThePreviousBuild('quiet-pottery.example');
    expect(process.memoryUsage().rss - before).toBeLessThan(MEMORY_BOUND);
    expect(READ_LIMITS.manifest.bytes).toBeLessThan(MEMORY_BOUND);
    await recovers();
  });

  it('a 2 GB manifest with its length declared: refused before its body is read', async () => {
    const huge = endlessBody(TWO_GB, true);
    // Logged once a minute per kind and limit (the first test logged it); every refusal is counted.
    const counted = async () =>
      sampleOf(parseMetrics(await (await fetch(g.gateway.metricsUrl!)).text()), 'mvr_store_reads_refused_total', {
        file: 'manifest',
        limit: 'size',
      });
    const before = await counted();
    expect(before).toBeGreaterThan(0);
    origin.answer(MANIFEST, huge);
    await waitFor(async () => (await counted()) > before, 'the refusal counted');
    await huge.ended;
    await servesThePreviousBuild('sparse-signals.example');
    await recovers();
  });

  it('a manifest that drips a byte every 20 ms: abandoned at its total deadline; health answers meanwhile; then recovers', async () => {
    const drip = drippingBody(20);
    origin.answer(MANIFEST, drip);
    await waitForLog(g, refusedRead('manifest', 'deadline'), 5000);
    await drip.ended;
    // The next refresh is dripping again now: health and lookups do not wait for it.
    await servesThePreviousBuild('new-arrival.example');
    await recovers();
  });
});

describe('refreshes of a hanging origin', () => {
  it('never stack: one manifest request in flight however many timer ticks pass, and the ticks skipped are counted', async () => {
    const held: ServerResponse[] = [];
    const own = await startStaticOrigin(await realpath(join(project.recordsDir, CURRENT_LINK)));
    // Long per-attempt and total limits, so only the test ends the hang.
    const slow = await startTestGateway(project, {
      trust: await trustingProject(project),
      records: { url: own.url, timeoutMs: 60_000, deadlineMs: 60_000 },
      metrics: { listen: { host: '127.0.0.1', port: 0 } },
    });
    const skipped = async () =>
      sampleOf(parseMetrics(await (await fetch(slow.gateway.metricsUrl!)).text()), 'mvr_store_refreshes_skipped_total');
    const asked = own.requests.length;
    own.answer(MANIFEST, (_req, res) => held.push(res));
    try {
      await waitFor(async () => held.length > 0 && (await skipped()) >= 5, 'five refresh ticks skipped while the manifest hangs');
      expect(own.requests.slice(asked).filter((p) => p === MANIFEST)).toHaveLength(1);
      expect(held).toHaveLength(1);
      expect((await slow.request('/healthz')).status).toBe(200);
    } finally {
      own.answer(MANIFEST, null);
      for (const res of held) res.writeHead(503).end();
      await slow.close();
      await own.stop();
    }
  });
});
