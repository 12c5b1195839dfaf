/**
 * What a mirror reads before it trusts: the statement alone first, checked against the trusted keys;
 * then nothing past what the statement signs (the map: its count times a leaf), and no derived file
 * of the source at all (the lookup index is rebuilt from the checked packs). Counted at the S3 test
 * server, which lists every request it answers: a file over its bound is refused at its length (a
 * HEAD), its bytes never asked for, and nothing goes live.
 */
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTRY_SIZE } from '#shared';
import { NOV } from '../support/logged-project.ts';
import { mirrorCli, packedProject, publishChanged } from '../support/mirror.ts';
import { type Project, removeTempDirs, tempDir } from '../support/project.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';

const BUCKET = 'mvr-mirror-bounds';
const MiB = 1024 * 1024;
let s3: TestS3;
let project: Project;
let records: number;
const current = (file: string) => join(project.recordsDir, 'current', file);

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  project = await packedProject(NOV);
  records = (JSON.parse(await readFile(current('statement.json'), 'utf8')) as { records: number }).records;
  // A map one leaf longer than the statement signs, with a megabyte more behind it.
  await publishChanged(s3, BUCKET, 'long-map', project, (p) =>
    appendFile(join(p.recordsDir, 'current', 'domain-map'), Buffer.alloc(ENTRY_SIZE + MiB)),
  );
  // A statement past the 64 KiB the limits table allows one (still JSON: spaces after it).
  await publishChanged(s3, BUCKET, 'long-statement', project, (p) =>
    appendFile(join(p.recordsDir, 'current', 'statement.json'), ' '.repeat(65 * 1024)),
  );
  // An index of 8 MiB of junk, where the build's is a few kilobytes: a mirror never reads it.
  await publishChanged(s3, BUCKET, 'junk-index', project, (p) =>
    writeFile(join(p.recordsDir, 'current', 'index.jsonl'), Buffer.alloc(8 * MiB, 0x78)),
  );
}, 120_000);
afterAll(async () => {
  await s3.close();
  await removeTempDirs();
});

/** The reads the S3 server answered for `file` of a build under `prefix` (not the publish's writes), by method. */
const asked = (prefix: string, file: string) =>
  s3.requests
    .filter((r) => /^(GET|HEAD) /.test(r) && r.includes(` /${BUCKET}/${prefix}/builds/`) && r.endsWith(`/${file}`))
    .map((r) => r.split(' ')[0]);

/** `mvr mirror` of `prefix` into an empty folder: its JSON answer, exit code and folder. */
async function mirrorOf(prefix: string) {
  const dir = join(await tempDir('mvr-mirror-'), 'mirror');
  const run = await mirrorCli(s3, `s3://${BUCKET}/${prefix}`, dir, project);
  return { out: JSON.parse(run.stdout) as { ok: boolean; code?: string; message?: string }, code: run.code, dir };
}

/** Nothing live in the folder, and no build in it. */
async function nothingLive(dir: string): Promise<void> {
  expect(await readdir(dir)).not.toContain('current');
  expect((await readdir(join(dir, 'builds')).catch(() => [])).filter((n) => !n.startsWith('.'))).toEqual([]);
}

describe('a mirror reads nothing past what the checked statement signs', () => {
  it('a domain map longer than the statement signs: refused at its length, its bytes never fetched', async () => {
    const { out, code, dir } = await mirrorOf('long-map');
    expect(out).toMatchObject({ ok: false, code: 'MIRROR_REFUSED' });
    expect(code).toBe(21);
    expect(out.message).toMatch(new RegExp(`domain-map .* is larger than the ${records * ENTRY_SIZE} bytes a mirror reads of it`));
    expect(asked('long-map', 'domain-map')).toEqual(['HEAD']);
    // Refused before any pack was asked for.
    expect(s3.requests.some((r) => r.startsWith('GET ') && r.includes(`/${BUCKET}/long-map/builds/`) && r.includes('/packs/'))).toBe(false);
    await nothingLive(dir);
  });

  it('a statement past the limits table: refused at its length, and the map never asked for', async () => {
    const { out, code, dir } = await mirrorOf('long-statement');
    expect(out).toMatchObject({ ok: false, code: 'MIRROR_REFUSED' });
    expect(code).toBe(21);
    expect(out.message).toMatch(/statement\.json .* is larger than the 65536 bytes a mirror reads of it/);
    expect(asked('long-statement', 'statement.json')).toEqual(['HEAD']);
    expect(asked('long-statement', 'domain-map')).toEqual([]);
    await nothingLive(dir);
  });

  it("the source's lookup index and pack index are never read: the mirror writes its own from the checked packs, the build's byte for byte", async () => {
    const { out, code, dir } = await mirrorOf('junk-index');
    expect(out).toMatchObject({ ok: true });
    expect(code).toBe(0);
    expect(asked('junk-index', 'index.jsonl')).toEqual([]);
    expect((await readFile(join(dir, 'current', 'index.jsonl'))).equals(await readFile(current('index.jsonl')))).toBe(true);
    // Nor is its pack index, the other file derived from the packs: written from the checked packs, the build's bytes.
    expect(asked('junk-index', 'pack-index')).toEqual([]);
    expect((await readFile(join(dir, 'current', 'pack-index'))).equals(await readFile(current('pack-index')))).toBe(true);
    // Only the statement, then the map, are read whole (HEAD for the length, then one ranged GET).
    expect(asked('junk-index', 'statement.json')).toEqual(['HEAD', 'GET']);
    expect(asked('junk-index', 'domain-map')).toEqual(['HEAD', 'GET']);
  });
});
