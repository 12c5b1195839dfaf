/**
 * `mvr publish` of a packed build, against the local server that checks every request's Signature
 * V4: the packs and the build's other files go up, never its per-record tree; a publish cut off
 * mid-way leaves the live build as it was, and run again sends only what is missing; a large file
 * goes up in parts, and a part that fails aborts its upload.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_LOG_IF_NOT_LIVE_DIR, BUILD_STATEMENT_FILE, BUILDS_DIR, isRecordFile } from '../../core/layout.ts';
import { putInParts } from '../../storage/s3/multipart.ts';
import { MULTIPART_RULES } from '../../storage/store.ts';
import { cleanup } from '../support/gateway.ts';
import { DEC, loggedProject, NOV } from '../support/logged-project.ts';
import { build, type Project } from '../support/project.ts';
import { bucketAt, publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';

const BUCKET = 'mvr-packs';
/** Small parts, so the build's larger files (index, domain map, statement) go up in parts: the test server takes parts of any size. */
const SMALL_PARTS = { partBytes: 1024, concurrency: 4 };

let s3: TestS3;
let p: Project;
let nov: string;
beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  p = await loggedProject();
  // With the per-record tree, which stays in the records folder: a bucket gets the packs.
  nov = (await build(p, { now: NOV, packRecords: 2, keep: 2, tree: true })).buildId;
});
afterAll(async () => {
  await cleanup();
  await s3.close();
});

const buildDir = (id: string) => join(p.recordsDir, BUILDS_DIR, id);
/** The keys (under the prefix) of every object a stretch of requests wrote: a PUT, or an upload in parts completed. */
const written = (requests: string[], prefix: string) =>
  requests
    .filter((r) => /^PUT [^?]+$/.test(r) || /^POST [^?]+\?uploadId$/.test(r))
    .map((r) => r.replace(/^\w+ /, '').replace(/\?.*$/, '').slice(`/${BUCKET}/${prefix}/`.length));
/** Every file of a build folder, relative to it. */
const filesOfBuild = async (id: string) =>
  (await readdir(buildDir(id), { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(buildDir(id).length + 1));
const liveIn = async (prefix: string) => {
  const res = await bucketAt(s3, BUCKET, prefix).get('live.json');
  return res.statusCode === 200 ? (JSON.parse(res.body.toString('utf8')) as { build: string }).build : null;
};

describe('publishing a packed build', () => {
  it('sends every pack and every other file of the build, none of its per-record tree; live.json last', async () => {
    const before = s3.requests.length;
    const summary = await publishTo(s3, BUCKET, 'packs', p);
    const keys = written(s3.requests.slice(before), 'packs');
    const files = await filesOfBuild(nov);
    const records = files.filter(isRecordFile);
    expect(records).toHaveLength(33);
    const statement = JSON.parse(await readFile(join(buildDir(nov), BUILD_STATEMENT_FILE), 'utf8')) as {
      packs: { files: { sha256: string; bytes: number }[] };
    };
    expect(statement.packs.files).toHaveLength(17); // 33 records, two a pack
    // The build's files but its records, with what goes beside them; the log's tiles and head before.
    expect(keys.filter((k) => k.startsWith(`${BUILDS_DIR}/`)).sort()).toEqual(
      [...files.filter((f) => !isRecordFile(f)), 'kept.json', 'merchant-verify-keys.json', 'merchant-verify-log.vkey']
        .map((f) => `${BUILDS_DIR}/${nov}/${f}`)
        .sort(),
    );
    expect(keys.filter((k) => /^[0-9a-f]{2}\/[^/]+\.json$/.test(k.split('/').slice(2).join('/')))).toEqual([]);
    expect(keys).toContain('log/checkpoint');
    expect(keys.at(-1)).toBe('live.json');
    expect(summary).toMatchObject({ objects: keys.length, uploaded: keys.length, skipped: 0 });
    const bucket = bucketAt(s3, BUCKET, 'packs');
    for (const pack of statement.packs.files) {
      expect(await bucket.head(`${BUILDS_DIR}/${nov}/packs/${pack.sha256}.jsonl`)).toMatchObject({ bytes: pack.bytes });
    }
  });

  it('cut off mid-way, the live build stays; run again, it sends only what is missing, in parts or whole', async () => {
    const dec = (await build(p, { now: DEC, packRecords: 2, keep: 2 })).buildId;
    let puts = 0;
    // The bucket fails every write after the twelfth.
    s3.failing = ({ method }) => method !== 'GET' && method !== 'HEAD' && ++puts > 12;
    const first = s3.requests.length;
    await expect(publishTo(s3, BUCKET, 'packs', p, undefined, SMALL_PARTS)).rejects.toThrow(
      /publish to s3:\/\/mvr-packs\/packs failed after \d+ of \d+ objects .*; the live build there is unchanged, and running it again sends only what is missing/,
    );
    s3.failing = null;
    const cutOff = written(s3.requests.slice(first), 'packs');
    expect(cutOff.length).toBeGreaterThan(0);
    expect(cutOff).not.toContain(`${BUILDS_DIR}/${dec}/manifest.json`);
    expect(await liveIn('packs')).toBe(nov);

    const again = s3.requests.length;
    const summary = await publishTo(s3, BUCKET, 'packs', p, undefined, SMALL_PARTS);
    const rest = written(s3.requests.slice(again), 'packs');
    // Nothing written whole the first time is sent again but the log's head, which moves.
    expect(rest.filter((k) => cutOff.includes(k))).toEqual(['log/checkpoint']);
    expect(summary).toMatchObject({ earlierBuilds: 0, uploaded: rest.length, skipped: summary.objects - rest.length });
    expect(summary.skipped).toBe(cutOff.length - 1);
    // Parts were used, and the two runs wrote every object of the build between them.
    expect(s3.requests.slice(first).some((r) => r.includes('?partNumber='))).toBe(true);
    // The log's step signed ahead for a publish short of its quorum stays local (it is never uploaded).
    const files = (await filesOfBuild(dec))
      .filter((f) => !isRecordFile(f) && !f.startsWith(`${BUILD_LOG_IF_NOT_LIVE_DIR}/`))
      .map((f) => `${BUILDS_DIR}/${dec}/${f}`);
    expect(files.filter((f) => !cutOff.includes(f) && !rest.includes(f))).toEqual([]);
    expect(await liveIn('packs')).toBe(dec);
    // What the bucket holds is the local bytes.
    const bucket = bucketAt(s3, BUCKET, 'packs');
    for (const f of ['index.jsonl', 'domain-map', BUILD_STATEMENT_FILE]) {
      const local = await readFile(join(buildDir(dec), f));
      expect(await bucket.head(`${BUILDS_DIR}/${dec}/${f}`)).toEqual({
        bytes: local.length,
        etag: createHash('md5').update(local).digest('hex'),
      });
    }
  });

  it('a bucket without the kept builds gets each of them packed, before live.json', async () => {
    const before = s3.requests.length;
    const summary = await publishTo(s3, BUCKET, 'fresh', p);
    const keys = written(s3.requests.slice(before), 'fresh');
    expect(summary.earlierBuilds).toBe(1);
    expect(keys.filter((k) => k.startsWith(`${BUILDS_DIR}/${nov}/packs/`))).toHaveLength(17);
    expect(keys.filter((k) => isRecordFile(k.split('/').slice(2).join('/')))).toEqual([]);
    expect(keys.indexOf(`${BUILDS_DIR}/${nov}/manifest.json`)).toBeLessThan(keys.indexOf('live.json'));
    const kept = await bucketAt(s3, BUCKET, 'fresh').get(`${BUILDS_DIR}/${summary.build}/kept.json`);
    expect((JSON.parse(kept.body.toString('utf8')) as { builds: { id: string }[] }).builds.map((b) => b.id)).toEqual([summary.build, nov]);
  });
});

describe('an upload in parts', () => {
  const size = 2 * MULTIPART_RULES.minPartBytes + 1024 ** 2; // two full parts of 5 MiB and a last, shorter one
  const body = Buffer.alloc(size, 'packed records ');
  const source = {
    bytes: size,
    partBytes: MULTIPART_RULES.minPartBytes,
    read: async (start: number, n: number) => body.subarray(start, start + n),
  };

  it('sends parts of 5 MiB (the last shorter) and completes them into one object', async () => {
    const before = s3.requests.length;
    const bucket = bucketAt(s3, BUCKET, 'parts');
    await putInParts(bucket, 'whole', 'application/octet-stream', source, pLimit(2));
    expect(s3.requests.slice(before).sort()).toEqual(
      [
        `POST /${BUCKET}/parts/whole?uploads`,
        ...[1, 2, 3].map((n) => `PUT /${BUCKET}/parts/whole?partNumber=${n}&uploadId`),
        `POST /${BUCKET}/parts/whole?uploadId`,
      ].sort(),
    );
    expect(await bucket.head('whole')).toEqual({ bytes: size, etag: createHash('md5').update(body).digest('hex') });
  });

  it('a part the bucket refuses aborts the upload: no object, no parts left', async () => {
    const before = s3.requests.length;
    const bucket = bucketAt(s3, BUCKET, 'parts');
    s3.failing = ({ query }) => query.get('partNumber') === '2';
    await expect(putInParts(bucket, 'cut', 'application/octet-stream', source, pLimit(2))).rejects.toThrow(
      /PUT s3:\/\/mvr-packs\/parts\/cut\?partNumber=2&uploadId=\w+ answered 503/,
    );
    s3.failing = null;
    expect(s3.requests.slice(before)).toContain(`DELETE /${BUCKET}/parts/cut?uploadId`);
    expect(await bucket.head('cut')).toBeNull();
    expect(await readdir(join(s3.directory, BUCKET, '._S3rver_uploads'))).toEqual([]);
  });
});

describe('a listing', () => {
  it('pages through every key under a prefix, with lengths and ETags, and nothing beside it', async () => {
    const bucket = bucketAt(s3, BUCKET, 'listed');
    const bodies = ['a', 'bb', 'ccc', 'dddd', 'e&<"'].map((t) => Buffer.from(t));
    await Promise.all(bodies.map((b, i) => bucket.put(`under/${i}`, b, 'application/octet-stream')));
    await bucket.put('beside', Buffer.from('x'), 'application/octet-stream');
    const before = s3.requests.length;
    const found = await bucket.list('under/', 2);
    expect(s3.requests.slice(before)).toHaveLength(3);
    expect(found).toEqual(
      new Map(bodies.map((b, i) => [`under/${i}`, { bytes: b.length, etag: createHash('md5').update(b).digest('hex') }])),
    );
  });
});
