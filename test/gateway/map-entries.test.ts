/**
 * The map commits to every record (decision 0077): a v2 build's map holds each domain's entry, and
 * the gateway serves a record only when its bytes are that entry's. A store that puts back the
 * same domain's record of the build before (same key, valid signature, fitted to the same length)
 * is answered 503 UNAVAILABLE, counted and logged as its own kind, while every other domain
 * serves; a v1 build (kept from before entries) still serves by the old rule.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_LINK } from '../../core/layout.ts';
import { loadActiveKey } from '../../keyring/signing-keys.ts';
import { cleanup, startTestGateway, type TestGateway, waitForLog } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { DEC, NOV } from '../support/logged-project.ts';
import { parseMetrics, sampleOf } from '../support/metrics-text.ts';
import { liveRecordBytes, replaceLiveRecord, rewriteAsV1Build } from '../support/packs.ts';
import { build, copyProject, GOLD, makeProject, type Project } from '../support/project.ts';

let p: Project;
let g: TestGateway;
let novBuild: string;
/** GOLD's record of November (verified), as its build stored it. */
let november: Buffer;

beforeAll(async () => {
  p = await makeProject({ build: false });
  novBuild = (await build(p, { now: NOV })).buildId;
  november = await liveRecordBytes(p, GOLD);
  // November's build is kept as a build made before entries would be: a v1 map and statement.
  await rewriteAsV1Build(join(p.recordsDir, CURRENT_LINK), await loadActiveKey(p.keysDir, undefined));
  // December: GOLD is flagged, with one flag more (so its record is longer, and November's fits in its place).
  const file = join(p.auditsDir, 'verified.jsonl');
  const lines = (await readFile(file, 'utf8')).split('\n');
  await writeFile(
    file,
    lines
      .map((l) => (l.includes(`"${GOLD}"`) ? l.replace(/^\{/, '{"flagged": true, "flags": ["missing_signal:reviews"], ') : l))
      .join('\n'),
  );
  await build(p, { now: DEC });
  const december = JSON.parse((await liveRecordBytes(p, GOLD)).toString('utf8')) as { status: string };
  expect(december.status).toBe('flagged');
  expect(JSON.parse(november.toString('utf8'))).toMatchObject({ domain: GOLD, status: 'verified' });
  await replaceLiveRecord(p, GOLD, november);
  g = await startTestGateway(p, { metrics: { listen: { host: '127.0.0.1', port: 0 } } });
});
afterAll(cleanup);

const rejected = async (kind: string): Promise<number> => {
  try {
    return sampleOf(parseMetrics(await (await fetch(g.gateway.metricsUrl!)).text()), 'mvr_records_rejected_total', { kind });
  } catch {
    return 0;
  }
};

describe("a record put back from the build before, in a v2 build's pack", () => {
  it('is 503 UNAVAILABLE on /v1/verify, counted as not_in_map, its cause in the log line and not in the answer', async () => {
    expect(await rejected('not_in_map')).toBe(0);
    const r = await g.verify(GOLD);
    expectProblem(r, 503, 'UNAVAILABLE');
    expect(r.text).not.toContain('record_hash');
    expect(r.text).not.toContain('verified');
    const line = await waitForLog(g, (l) => l.msg === 'record rejected' && l.domain === GOLD);
    expect(line.kind).toBe('not_in_map');
    expect(String(line.reason)).toMatch(/record_hash/);
    expect(await rejected('not_in_map')).toBe(1);
    expect(await rejected('serve_rule')).toBe(0);
  });

  it('leaves every other domain served', async () => {
    for (const domain of ['gadget-hub.example', 'corner-bakery.example']) expect((await g.verify(domain)).status).toBe(200);
  });

  it('is refused on the other routes that read it too: the log proof, the domain history, a batch', async () => {
    expectProblem(await g.request(`/v1/proof?domain=${GOLD}`), 503, 'UNAVAILABLE');
    expectProblem(await g.request(`/v1/history?domain=${GOLD}`), 503, 'UNAVAILABLE');
    const batch = await g.request('/v1/verify/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domains: [GOLD, 'gadget-hub.example'] }),
    });
    const { results } = batch.json as { results: { record?: { domain: string }; problem?: { code: string; status: number } }[] };
    expect(results[0]!.problem).toMatchObject({ code: 'UNAVAILABLE', status: 503 });
    expect(results[1]!.record).toMatchObject({ domain: 'gadget-hub.example' });
  });
});

describe('a v1 build, kept from before entries', () => {
  it('still serves its records, by the rule it was made under', async () => {
    const r = await g.request(`/v1/verify?domain=${GOLD}&build=${novBuild}`);
    expect(r.status).toBe(200);
    expect(r.bytes.equals(november)).toBe(true);
  });

  it('served live, it serves the record put back, as every build did before entries (what a v2 map closes)', async () => {
    const v1 = await copyProject(p);
    await rewriteAsV1Build(join(v1.recordsDir, CURRENT_LINK), await loadActiveKey(v1.keysDir, undefined));
    const old = await startTestGateway(v1);
    try {
      const r = await old.verify(GOLD);
      expect(r.status).toBe(200);
      expect((r.json as { status: string }).status).toBe('verified');
    } finally {
      await old.close();
    }
  });
});
