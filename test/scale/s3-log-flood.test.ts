/**
 * The public log routes cost a bucket nothing new per request: a flood of requests for a tile,
 * the checkpoint and the log's key, each with a random query string, is answered from memory (keyed
 * by path, never by query), and the bucket sees no read of them; only the live pointer is polled.
 */
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_VKEY_PATH } from '../../core/layout.ts';
import { createLogKey, logOrigin } from '../../keyring/log-key.ts';
import { s3ConfigFromEnv } from '../../storage/s3/bucket.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { build, ISSUER, makeProject, type Project, removeTempDirs } from '../support/project.ts';
import { publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';

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
