/**
 * Never fail open, on a bucket: a record's pack object that is missing, overwritten or truncated is 503
 * UNAVAILABLE for its domain while the rest of the build is served, and a build published without
 * a map or with one that does not check is refused whole. Each fault is made in the local build
 * before `mvr publish` uploads it, as a broken build or a sync tool would leave it.
 */
import { cp, readFile, realpath, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTRY_SIZE } from '#shared';
import { BUILD_STATEMENT_FILE, CURRENT_LINK, DOMAIN_MAP_FILE, PACK_INDEX_FILE } from '../../core/layout.ts';
import { s3ConfigFromEnv } from '../../storage/s3/bucket.ts';
import { cleanup, startTestGateway, type TestGateway, trustingProject } from '../support/gateway.ts';
import { expectCauseLogged, expectProblem } from '../support/gateway-expect.ts';
import { livePackFile } from '../support/packs.ts';
import { build, makeProject, type Project } from '../support/project.ts';
import { publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';

const BUCKET = 'mvr-faults';
const FLAGGED = 'dubious-deals.example';
const CONTROL = 'acme-outdoor.example';
const NEVER = 'never-audited-control.example';

let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  // `other` is a build of its own (the plain project is one build copied to every caller).
  [project, other] = await Promise.all([makeProject({ build: false }), makeProject({ build: false })]);
  // One record a pack, so a fault of one pack is a fault of one record.
  await Promise.all([build(project, { packRecords: 1 }), build(other)]);
});
afterAll(async () => {
  await cleanup();
  await s3.close();
});

let project: Project;
let other: Project;

/** The project's live build with `fault` made in it, published to its own prefix (the build then put back), and a gateway reading it. */
async function faultedBucket(prefix: string, fault: (p: Project) => Promise<void>): Promise<TestGateway> {
  const live = await realpath(join(project.recordsDir, CURRENT_LINK));
  await cp(live, `${live}.whole`, { recursive: true });
  try {
    await fault(project);
    await publishTo(s3, BUCKET, prefix, project);
  } finally {
    await rm(live, { recursive: true, force: true });
    await rename(`${live}.whole`, live);
  }
  return startTestGateway(project, {
    trust: await trustingProject(project),
    records: { url: `s3://${BUCKET}/${prefix}`, s3: s3ConfigFromEnv(s3.env), publicDir: '/nonexistent' },
  });
}

describe("a record's pack object faulted in a bucket", () => {
  const faults: [string, (file: string) => Promise<void>, RegExp][] = [
    ['missing', (f) => rm(f), /missing from the live build \(its pack is not there\), though its map lists it/],
    ['overwritten with 70 KiB of blanks', (f) => writeFile(f, Buffer.alloc(70 * 1024, 0x20)), /corrupt \(not JSON\)/],
    ['truncated', async (f) => truncate(f, (await readFile(f)).length - 10), /ends before the record of/],
  ];
  for (const [fault, make, reason] of faults) {
    it(`${fault}: the flagged merchant is 503 UNAVAILABLE (why in the log), never "unverified"; the rest is served`, async () => {
      const g = await faultedBucket(`object-${fault.replace(/\W+/g, '-')}`, async (p) => make(await livePackFile(p, FLAGGED)));
      const r = await g.verify(FLAGGED);
      expectCauseLogged(g, expectProblem(r, 503, 'UNAVAILABLE'), [reason]);
      expect(r.text).not.toContain('unverified');
      expectProblem(await g.request(`/v1/history?domain=${FLAGGED}`), 503, 'UNAVAILABLE');
      expect((await g.verify(CONTROL)).status).toBe(200);
      expect((await g.verify(NEVER)).json.status).toBe('unverified');
      expect((await g.request(`/v1/absence?domain=${NEVER}`)).status).toBe(200);
      expect((await g.request('/healthz', { key: null })).json.records.failures).toBe(1);
    });
  }
});

describe('a build published without its map, or with one that does not check', () => {
  const cases: [string, (build: string) => Promise<void>, RegExp][] = [
    ['no domain map', (b) => rm(join(b, DOMAIN_MAP_FILE)), /has no domain-map/],
    ['no statement', (b) => rm(join(b, BUILD_STATEMENT_FILE)), /has no statement\.json/],
    ['no pack index', (b) => rm(join(b, PACK_INDEX_FILE)), /has no pack-index/],
    [
      'a map with a leaf dropped',
      async (b) => writeFile(join(b, DOMAIN_MAP_FILE), (await readFile(join(b, DOMAIN_MAP_FILE))).subarray(ENTRY_SIZE)),
      /is not the map its statement signs/,
    ],
    [
      'the statement of another build',
      async (b) => {
        await cp(join(other.recordsDir, CURRENT_LINK, BUILD_STATEMENT_FILE), join(b, BUILD_STATEMENT_FILE));
      },
      /does not verify|is the statement of build/,
    ],
  ];
  for (const [fault, make, reason] of cases) {
    it(`${fault}: every domain 503 STORE_UNAVAILABLE, never "unverified"`, async () => {
      const g = await faultedBucket(`map-${fault.replace(/\W+/g, '-')}`, (p) => make(join(p.recordsDir, CURRENT_LINK)));
      for (const domain of [FLAGGED, CONTROL, NEVER]) {
        const r = await g.verify(domain);
        expectCauseLogged(g, expectProblem(r, 503, 'STORE_UNAVAILABLE'), [reason]);
        expect(r.text).not.toContain('unverified');
      }
      expect((await g.request('/healthz', { key: null })).json).toMatchObject({ status: 'degraded', records: { ok: false } });
    });
  }
});
