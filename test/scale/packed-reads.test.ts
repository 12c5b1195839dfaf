/**
 * One read path: a build of many packs (`--pack-records 2`) is served record for record from a
 * folder, an http origin (Range requests) and a bucket (ranged GETs); from cold a record costs the
 * build's map and pack index (read once, when the build is taken) and then one ranged read of its
 * pack, counted at the origin and the bucket. A pack index that does not match the statement's
 * packs is refused with its build, and the build served before stays served.
 */
import { cp, readFile, realpath, rename, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_STATEMENT_FILE, BUILDS_DIR, CURRENT_LINK, DOMAIN_MAP_FILE, MANIFEST_FILE, PACK_INDEX_FILE } from '../../core/layout.ts';
import { cleanup, startTestGateway, type TestGateway, trustingProject, waitForLog } from '../support/gateway.ts';
import { liveRecords } from '../support/outputs.ts';
import { livePlace } from '../support/packs.ts';
import { build, copyProject, makeProject, NOW, type Project } from '../support/project.ts';
import { gatewayOnBucket, publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { type StaticOrigin, startStaticOrigin } from '../support/static-origin.ts';

const BUCKET = 'packed';
const NEVER = 'never-audited-packed.example';

let project: Project;
let records: Map<string, Buffer>;
let s3: TestS3;
let origin: StaticOrigin;

beforeAll(async () => {
  project = await makeProject({ build: false });
  await build(project, { packRecords: 2 });
  records = await liveRecords(project);
  s3 = await startS3([BUCKET]);
  await publishTo(s3, BUCKET, 'many', project);
  origin = await startStaticOrigin(await realpath(join(project.recordsDir, CURRENT_LINK)));
});
afterAll(async () => {
  await cleanup();
  await origin.stop();
  await s3.close();
});

/** Every record answered with its exact bytes, and a never-audited domain as such. */
async function expectEveryRecord(g: TestGateway): Promise<void> {
  for (const [domain, bytes] of records) {
    const r = await g.verify(domain);
    expect(r.status, domain).toBe(200);
    expect(r.bytes.equals(bytes), domain).toBe(true);
  }
  expect((await g.verify(NEVER)).json.status).toBe('unverified');
}

describe('a build of many packs', () => {
  it('has them: 33 records two a pack are 17 packs', async () => {
    const statement = JSON.parse(await readFile(join(project.recordsDir, CURRENT_LINK, BUILD_STATEMENT_FILE), 'utf8'));
    expect(records.size).toBe(33);
    expect(statement.packs).toMatchObject({ records_per_pack: 2, files: expect.any(Array) });
    expect(statement.packs.files).toHaveLength(17);
  });

  it('is answered record for record from a folder', async () => {
    const g = await startTestGateway(project);
    await expectEveryRecord(g);
  });

  it('from an origin: its map and pack index once, then one ranged read of a pack a record, none for a record in memory', async () => {
    const g = await startTestGateway(project, { records: { url: origin.url }, trust: await trustingProject(project) });
    for (const file of [DOMAIN_MAP_FILE, PACK_INDEX_FILE, BUILD_STATEMENT_FILE])
      expect(origin.requests.filter((r) => r === `/${file}`)).toHaveLength(1);
    for (const [domain, bytes] of records) {
      const before = origin.requests.length;
      const r = await g.verify(domain);
      expect(r.bytes.equals(bytes), domain).toBe(true);
      const reads = origin.requests.slice(before).filter((path) => path !== `/${MANIFEST_FILE}`);
      expect(reads, domain).toEqual([`/${(await livePlace(project, domain)).path}`]);
    }
    const before = origin.requests.length;
    await expectEveryRecord(g);
    expect(origin.requests.slice(before).filter((path) => path !== `/${MANIFEST_FILE}`)).toEqual([]);
    for (const file of [DOMAIN_MAP_FILE, PACK_INDEX_FILE]) expect(origin.requests.filter((r) => r === `/${file}`)).toHaveLength(1);
  });

  it('from an origin that ignores ranges (a whole pack for a record): 503 STORE_UNAVAILABLE, never a record', async () => {
    const g = await startTestGateway(project, { records: { url: origin.url }, trust: await trustingProject(project) });
    const [domain] = [...records.keys()] as [string];
    const pack = `/${(await livePlace(project, domain)).path}`;
    const whole = await readFile(join(project.recordsDir, CURRENT_LINK, pack));
    origin.answer(pack, (_req, res) => res.writeHead(200, { 'content-length': whole.length }).end(whole));
    try {
      const r = await g.verify(domain);
      expect(r.status).toBe(503);
      expect(r.json.code).toBe('STORE_UNAVAILABLE');
    } finally {
      origin.answer(pack, null);
    }
  });

  it('from a bucket: one ranged GET of a pack a record, counted at the bucket', async () => {
    const g = await gatewayOnBucket(s3, BUCKET, 'many', project);
    const build = basename(await realpath(join(project.recordsDir, CURRENT_LINK)));
    const key = (file: string) => `GET /${BUCKET}/many/${BUILDS_DIR}/${build}/${file}`;
    for (const file of [DOMAIN_MAP_FILE, PACK_INDEX_FILE]) expect(s3.requests.filter((r) => r === key(file))).toHaveLength(1);
    for (const [domain, bytes] of records) {
      const before = s3.requests.length;
      const r = await g.verify(domain);
      expect(r.bytes.equals(bytes), domain).toBe(true);
      const reads = s3.requests.slice(before).filter((r) => !r.endsWith('/live.json'));
      expect(reads, domain).toEqual([key((await livePlace(project, domain)).path)]);
    }
    await expectEveryRecord(g);
  });
});

describe('a new build whose pack index does not match its statement', () => {
  it('is refused, naming the pack index; the build served before stays served', async () => {
    const p = await copyProject(project);
    const g = await startTestGateway(p);
    const [domain, bytes] = [...records][0]!;
    expect((await g.verify(domain)).bytes.equals(bytes)).toBe(true);
    // The next build, made beside it, its pack index spoiled, then named live in one step.
    const next = await copyProject(p);
    await build(next, { now: NOW + 60_000, packRecords: 2 });
    const dir = await realpath(join(next.recordsDir, CURRENT_LINK));
    const index = await readFile(join(dir, PACK_INDEX_FILE));
    // Record 0 said to end where record 1 does.
    index.writeUInt32BE(index.readUInt32BE(4), 0);
    await cp(dir, join(p.recordsDir, BUILDS_DIR, basename(dir)), { recursive: true });
    await writeFile(join(p.recordsDir, BUILDS_DIR, basename(dir), PACK_INDEX_FILE), index);
    await symlink(join(BUILDS_DIR, basename(dir)), join(p.recordsDir, 'next-link'));
    await rename(join(p.recordsDir, 'next-link'), join(p.recordsDir, CURRENT_LINK));
    const refused = await waitForLog(g, (l) => l.msg === 'build refused; the build served before (if any) stays served');
    expect(refused.reason).toMatch(/pack-index does not match its statement's packs: record 1's offset \d+ does not follow \d+/);
    const r = await g.verify(domain);
    expect(r.status).toBe(200);
    expect(r.bytes.equals(bytes)).toBe(true);
    expect((await g.request('/healthz', { key: null })).json).toMatchObject({ status: 'degraded', records: { ok: true } });
  });
});
