/**
 * The mirror routes on the real gateway: `GET /v1/mirror` and `GET /v1/mirror/builds/{build}/{file}`
 * for a key made with the mirror scope, over a build of many packs (`--pack-records 2`) and a kept
 * build before it. An ordinary key is refused (403), every pack fetched whole hashes to its name,
 * ranges are the file's bytes, a pack larger than a chunk comes whole, unknown names and builds are
 * 404, and a gateway on an http(s) origin says it has no builds to mirror.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CURRENT_LINK } from '../../core/layout.ts';
import { MIRROR_CHUNK_BYTES } from '../../service/mirror-files.ts';
import { addApiKey, cleanup, startTestGateway, trustingProject } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { build, makeProject } from '../support/project.ts';
import { startStaticOrigin } from '../support/static-origin.ts';

afterAll(cleanup);

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('the mirror routes', async () => {
  const project = await makeProject({ build: false });
  await build(project, { now: Date.parse('2026-11-01T00:00:00Z') });
  await build(project, { now: Date.parse('2026-12-01T00:00:00Z'), packRecords: 2 });
  const g = await startTestGateway(project);
  const mirror = (await addApiKey(g, 'mirror', ['mirror'])).key;
  const [live, older] = ((await g.request('/v1/builds')).json.builds as { id: string }[]).map((b) => b.id) as [string, string];
  const liveDir = await realpath(join(project.recordsDir, CURRENT_LINK));
  const onDisk = (build: string, file: string) => readFile(join(project.recordsDir, 'builds', build, file));
  const statement = JSON.parse((await onDisk(live, 'statement.json')).toString('utf8'));
  const packs = statement.packs.files as { sha256: string; bytes: number }[];
  const fileOf = (build: string, file: string, headers: Record<string, string> = {}) =>
    g.request(`/v1/mirror/builds/${build}/${file}`, { key: mirror, headers });

  it('refuses an ordinary key (403 FORBIDDEN) and no key (401) on each route, and answers a mirror key', async () => {
    for (const path of [
      '/v1/mirror',
      `/v1/mirror/builds/${live}/statement.json`,
      `/v1/mirror/builds/${live}/packs/${packs[0]!.sha256}.jsonl`,
    ]) {
      expect(expectProblem(await g.request(path), 403, 'FORBIDDEN').detail).toMatch(/--scope mirror/);
      expectProblem(await g.request(path, { key: null }), 401, 'UNAUTHORIZED');
      expect((await g.request(path, { key: mirror })).status).toBe(200);
    }
  });

  it('names the live build and its signed statement, kept by no cache', async () => {
    const r = await g.request('/v1/mirror', { key: mirror });
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('cache-control')).toBe('private, no-store');
    expect(r.json).toEqual({ build: live, statement });
    expect(liveDir.endsWith(live)).toBe(true);
  });

  it('hands out every pack of a several-pack build whole: each hashes to its name, as long as the statement says', async () => {
    expect(packs.length).toBeGreaterThan(5);
    for (const pack of packs) {
      const r = await fileOf(live, `packs/${pack.sha256}.jsonl`);
      expect(r.status).toBe(200);
      expect({ sha: sha256(r.bytes), bytes: r.bytes.length }).toEqual({ sha: pack.sha256, bytes: pack.bytes });
      expect(r.headers.get('etag')).toBe(`"${pack.sha256}"`);
      expect(r.headers.get('content-type')).toBe('application/octet-stream');
      expect(r.headers.get('accept-ranges')).toBe('bytes');
      expect(r.headers.get('content-length')).toBe(String(pack.bytes));
    }
  });

  it("hands out the build's named files byte for byte, JSON ones as JSON, and a kept build's too", async () => {
    const types: Record<string, string> = {
      'statement.json': 'application/json',
      'manifest.json': 'application/json',
      'domain-map': 'application/octet-stream',
      'pack-index': 'application/octet-stream',
      'index.jsonl': 'application/octet-stream',
    };
    for (const [build, file] of [...Object.keys(types).map((f) => [live, f]), [older, 'statement.json'], [older, 'domain-map']] as const) {
      const r = await fileOf(build, file);
      expect({ file, status: r.status, type: r.headers.get('content-type') }).toEqual({ file, status: 200, type: types[file] });
      expect(r.bytes.equals(await onDisk(build, file)), `${build}/${file}`).toBe(true);
      const again = await fileOf(build, file, { 'if-none-match': r.headers.get('etag')! });
      expect(again.status).toBe(304);
    }
  });

  it('answers one byte range: the first bytes, from an offset to the end, the last n (all of it when n is longer); 416 past the end', async () => {
    const pack = packs[1]!;
    const name = `packs/${pack.sha256}.jsonl`;
    const bytes = await onDisk(live, name);
    const first = await fileOf(live, name, { range: 'bytes=0-9' });
    expect({ status: first.status, range: first.headers.get('content-range') }).toEqual({ status: 206, range: `bytes 0-9/${pack.bytes}` });
    expect(first.bytes.equals(bytes.subarray(0, 10))).toBe(true);
    const from = await fileOf(live, name, { range: 'bytes=100-' });
    expect(from.status).toBe(206);
    expect(from.bytes.equals(bytes.subarray(100))).toBe(true);
    const last = await fileOf(live, name, { range: 'bytes=-20' });
    expect(last.headers.get('content-range')).toBe(`bytes ${pack.bytes - 20}-${pack.bytes - 1}/${pack.bytes}`);
    expect(last.bytes.equals(bytes.subarray(-20))).toBe(true);
    // RFC 9110 14.1.2: a suffix longer than the file is all of it (206, the whole file), not 416.
    for (const suffix of [pack.bytes, pack.bytes + 1, pack.bytes * 10]) {
      const all = await fileOf(live, name, { range: `bytes=-${suffix}` });
      expect({ suffix, status: all.status, range: all.headers.get('content-range') }).toEqual({
        suffix,
        status: 206,
        range: `bytes 0-${pack.bytes - 1}/${pack.bytes}`,
      });
      expect(all.bytes.equals(bytes)).toBe(true);
    }
    expectProblem(await fileOf(live, name, { range: 'bytes=-0' }), 416, 'RANGE_NOT_SATISFIABLE');
    const past = await fileOf(live, name, { range: `bytes=${pack.bytes}-` });
    expectProblem(past, 416, 'RANGE_NOT_SATISFIABLE');
    expect(past.headers.get('content-range')).toBe(`bytes */${pack.bytes}`);
    // Several ranges: the whole file (a server may answer them so).
    const several = await fileOf(live, name, { range: 'bytes=0-1,10-11' });
    expect(several.status).toBe(200);
    expect(several.bytes.equals(bytes)).toBe(true);
  });

  it('streams a pack larger than a chunk whole, and a range across chunks exactly', async () => {
    const big = randomBytes(MIRROR_CHUNK_BYTES * 3 + 12345);
    const name = `packs/${sha256(big)}.jsonl`;
    await writeFile(join(liveDir, name), big);
    const whole = await fileOf(live, name);
    expect(whole.status).toBe(200);
    expect(sha256(whole.bytes)).toBe(sha256(big));
    const start = MIRROR_CHUNK_BYTES - 7;
    const across = await fileOf(live, name, { range: `bytes=${start}-${start + MIRROR_CHUNK_BYTES + 13}` });
    expect(across.status).toBe(206);
    expect(across.bytes.equals(big.subarray(start, start + MIRROR_CHUNK_BYTES + 14))).toBe(true);
  });

  it('404s: a name the route does not serve or a missing file NOT_FOUND, a build not kept BUILD_NOT_FOUND', async () => {
    const names = ['kept.json', 'ab/acme-outdoor.example.json', `packs/${'A'.repeat(64)}.jsonl`, 'packs/abc.jsonl', '../kept.json'];
    for (const file of [...names, 'AB/log.jsonl', 'abc/log.jsonl', 'ab/index.jsonl'])
      expectProblem(await fileOf(live, file), 404, 'NOT_FOUND');
    // Named, but not in this build: it was made without a log key (a shard's log entries are served from a build with one: test/mirror).
    for (const file of ['log-checkpoint', 'ab/log.jsonl']) expectProblem(await fileOf(live, file), 404, 'NOT_FOUND');
    expectProblem(await fileOf(live, `packs/${'0'.repeat(64)}.jsonl`), 404, 'NOT_FOUND');
    expectProblem(await fileOf('20200101T000000Z-nope', 'statement.json'), 404, 'BUILD_NOT_FOUND');
    expectProblem(await g.request('/v1/mirror/builds/', { key: mirror }), 404, 'NOT_FOUND');
  });

  it('a gateway on an http(s) origin has no builds to mirror, and says so', async () => {
    const origin = await startStaticOrigin(liveDir);
    try {
      const o = await startTestGateway(project, { records: { url: origin.url }, trust: await trustingProject(project) });
      const key = (await addApiKey(o, 'mirror', ['mirror'])).key;
      expect(expectProblem(await o.request('/v1/mirror', { key }), 404, 'BUILD_NOT_FOUND').detail).toMatch(/no builds to mirror/);
      expectProblem(await o.request(`/v1/mirror/builds/${live}/statement.json`, { key }), 404, 'BUILD_NOT_FOUND');
      await o.close();
    } finally {
      await origin.stop();
    }
  });
});
