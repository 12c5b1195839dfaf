/**
 * The mirror routes on a gateway reading `--records s3://` answer as on a records folder: a
 * several-pack build published to a local server that checks every request's Signature V4, each
 * pack whole hashing to its name, a range of a pack, the domain map byte for byte (its length from
 * one ranged read), a file the build lacks 404, a build the bucket does not keep 404.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addApiKey, cleanup } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { build, makeProject } from '../support/project.ts';
import { gatewayOnBucket, publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';

const BUCKET = 'mvr-mirror';
let s3: TestS3;

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
});
afterAll(async () => {
  await cleanup();
  await s3.close();
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('the mirror routes on s3://', () => {
  it('hand out a published several-pack build as the folder does', async () => {
    const p = await makeProject({ build: false });
    const summary = await build(p, { packRecords: 2 });
    await publishTo(s3, BUCKET, 'records', p);
    const g = await gatewayOnBucket(s3, BUCKET, 'records', p);
    const key = (await addApiKey(g, 'mirror', ['mirror'])).key;
    const head = await g.request('/v1/mirror', { key });
    expect(head.status).toBe(200);
    const { build: live, statement } = head.json as { build: string; statement: { packs: { files: { sha256: string; bytes: number }[] } } };
    expect(live).toBe(summary.buildId);
    const file = (name: string, headers: Record<string, string> = {}) => g.request(`/v1/mirror/builds/${live}/${name}`, { key, headers });

    expect(statement.packs.files.length).toBeGreaterThan(5);
    for (const pack of statement.packs.files) {
      const r = await file(`packs/${pack.sha256}.jsonl`);
      expect({ status: r.status, sha: sha256(r.bytes), bytes: r.bytes.length }).toEqual({
        status: 200,
        sha: pack.sha256,
        bytes: pack.bytes,
      });
    }
    const pack = statement.packs.files[2]!;
    const tail = await file(`packs/${pack.sha256}.jsonl`, { range: `bytes=${pack.bytes - 30}-` });
    expect({ status: tail.status, range: tail.headers.get('content-range') }).toEqual({
      status: 206,
      range: `bytes ${pack.bytes - 30}-${pack.bytes - 1}/${pack.bytes}`,
    });
    expect(
      sha256(Buffer.concat([(await file(`packs/${pack.sha256}.jsonl`, { range: `bytes=0-${pack.bytes - 31}` })).bytes, tail.bytes])),
    ).toBe(pack.sha256);
    const map = await file('domain-map');
    expect(map.bytes.equals(await readFile(join(p.recordsDir, 'builds', live, 'domain-map')))).toBe(true);
    expect(map.headers.get('content-length')).toBe(String(map.bytes.length));
    expectProblem(await file('log-checkpoint'), 404, 'NOT_FOUND');
    expectProblem(await g.request('/v1/mirror/builds/20200101T000000Z-nope/statement.json', { key }), 404, 'BUILD_NOT_FOUND');
  });
});
