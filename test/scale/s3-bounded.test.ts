/**
 * A bucket's reads are bounded. The public log routes cost it nothing new per request: a flood of
 * requests for a tile, the checkpoint and the log's key, each with a random query string, is
 * answered from memory (keyed by path, never by query), and the bucket sees no read of them; only
 * the live pointer is polled. A live pointer larger than its limit is refused, typed, and the build
 * served before stays served until the pointer is right again.
 */
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_POINTER_OBJECT, LOG_VKEY_PATH } from '../../core/layout.ts';
import { READ_LIMITS } from '../../core/limits.ts';
import { createLogKey, logOrigin } from '../../keyring/log-key.ts';
import { s3ConfigFromEnv } from '../../storage/s3/bucket.ts';
import { cleanup, startTestGateway, type TestGateway, trustingProject, waitForLog } from '../support/gateway.ts';
import { build, ISSUER, makeProject, type Project, removeTempDirs } from '../support/project.ts';
import { bucketAt, publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { waitFor } from '../support/wait.ts';

const BUCKET = 'mvr-flood';
const FLOOD = 400;
let s3: TestS3;
let project: Project;
let g: TestGateway;

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  project = await makeProject({ build: false });
  await createLogKey(project.keysDir, logOrigin(ISSUER));
  await build(project, { now: Date.parse('2026-11-01T00:00:00Z') });
  await publishTo(s3, BUCKET, 'prod', project);
  g = await startTestGateway(project, {
    trust: await trustingProject(project),
    // The checkpoint and partial tiles are kept a minute here, so the flood cannot outlast them.
    records: { url: `s3://${BUCKET}/prod`, s3: s3ConfigFromEnv(s3.env), publicDir: '/nonexistent', logFreshMs: 60_000 },
  });
}, 60_000);
afterAll(async () => {
  await cleanup();
  await s3.close();
  await removeTempDirs();
});

/** `count` requests for `path`, each with a query string of its own, a batch at a time; every answer's bytes. */
async function flood(path: string, count: number): Promise<Buffer[]> {
  const bodies: Buffer[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = Array.from({ length: Math.min(50, count - i) }, () => g.request(`${path}?r=${randomUUID()}`, { key: null }));
    for (const r of await Promise.all(batch)) {
      expect(r.status).toBe(200);
      bodies.push(r.bytes);
    }
  }
  return bodies;
}

describe('a flood of public log requests on a bucket', () => {
  it('makes no read of the bucket once each file was read: a tile, the checkpoint and the log key with random queries', async () => {
    const tiles = (await readdir(join(project.publicDir, 'log', 'tile'), { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(join(project.publicDir, 'log').length + 1));
    const tile = tiles.find((t) => t.startsWith('tile/0/'))!;
    expect(tile).toBeDefined();
    const paths = [`/log/${tile}`, '/log/checkpoint', LOG_VKEY_PATH];
    // Each read once, as the first request for it would.
    for (const path of paths) expect((await g.request(path, { key: null })).status).toBe(200);
    const before = s3.requests.length;
    const tileBytes = await flood(`/log/${tile}`, FLOOD);
    const checkpoints = await flood('/log/checkpoint', 100);
    const vkeys = await flood(LOG_VKEY_PATH, 100);
    expect(new Set(tileBytes.map((b) => b.toString('hex')))).toEqual(
      new Set([(await readFile(join(project.publicDir, 'log', tile))).toString('hex')]),
    );
    expect(new Set(checkpoints.map(String))).toEqual(new Set([await readFile(join(project.publicDir, 'log', 'checkpoint'), 'utf8')]));
    expect(new Set(vkeys.map(String)).size).toBe(1);
    // Only the refresh's conditional look at the live pointer reached the bucket meanwhile.
    const reads = s3.requests.slice(before).filter((r) => !r.endsWith('/live.json'));
    expect(reads).toEqual([]);
  });
});

describe('a live pointer past its limit', () => {
  it('is refused at its size, typed; the build served before stays served; a right pointer is taken again', async () => {
    const bucket = bucketAt(s3, BUCKET, 'prod');
    const right = (await bucket.get(LIVE_POINTER_OBJECT)).body;
    const pointer = JSON.parse(right.toString('utf8')) as Record<string, unknown>;
    const padded = JSON.stringify({ ...pointer, padding: 'x'.repeat(READ_LIMITS.livePointer.bytes) });
    try {
      await bucket.put(LIVE_POINTER_OBJECT, Buffer.from(padded), 'application/json');
      await waitForLog(
        g,
        (l) => l.msg === 'store read refused at its limit; what was served before stays served' && l.file === 'livePointer',
        5000,
      );
      const health = await g.request('/healthz');
      expect(health.json).toMatchObject({ status: 'degraded', records: { ok: false, build: pointer.build } });
      const r = await g.verify('quiet-pottery.example');
      expect(r.status).toBe(200);
      expect(r.json.domain).toBe('quiet-pottery.example');
    } finally {
      await bucket.put(LIVE_POINTER_OBJECT, right, 'application/json');
      await bucket.close();
    }
    await waitFor(async () => (await g.request('/healthz')).json?.status === 'ok', 'the gateway healthy again');
  });
});
