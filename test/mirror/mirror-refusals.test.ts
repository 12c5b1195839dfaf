/**
 * What a mirror refuses, each with a message naming what failed, while its previous build stays
 * live and answering: a bucket serving a tampered pack, a pack missing, a record swapped between
 * two packs, a record dropped, a manifest at odds with its statement, a build whose statement a
 * key the mirror does not trust signed, and the source rolled back to the build before.
 * Each is tried on a copy of the mirror: what one refused run fetched (good packs it checked, or
 * fetched ahead) stays for the next run and would stand in for a pack the next bucket lacks.
 */
import { readFileSync } from 'node:fs';
import { cp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordPath } from '../../core/layout.ts';
import { runCli } from '../support/cli.ts';
import { DEC, NOV } from '../support/logged-project.ts';
import { buildsIn, mirrorCli, packedProject, packFile, packLines, packsOf, publishChanged, rewritePack } from '../support/mirror.ts';
import { build, GOLD, type Project, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';
import { publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';

const BUCKET = 'mvr-mirror-refusals';
const from = (prefix: string) => `s3://${BUCKET}/${prefix}`;
let s3: TestS3;
let project: Project;
/** The mirror of November's build. */
let mirrored: string;
let live: string;
let packs: { sha256: string; bytes: number }[];

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  project = await packedProject(NOV);
  await publishTo(s3, BUCKET, 'nov', project);
  mirrored = join(await tempDir('mvr-mirror-'), 'mirror');
  const first = await mirrorCli(s3, from('nov'), mirrored, project);
  expect(first.code).toBe(0);
  live = await readlink(join(mirrored, 'current'));
  // December's build, published changed in each way a bucket could serve it.
  await build(project, { now: DEC, packRecords: 2 });
  packs = await packsOf(project);
  const [t, m, s0, s1, d] = [1, 2, 3, 5, 7];
  await publishChanged(s3, BUCKET, 'tampered', project, async (p) => {
    const lines = await packLines(p, t);
    await rewritePack(p, t, [lines[0]!.replace('"status":"', '"status":"x'), ...lines.slice(1)]);
  });
  await publishChanged(s3, BUCKET, 'missing', project, async (p) => rm(await packFile(p, m)));
  await publishChanged(s3, BUCKET, 'swapped', project, async (p) => {
    const [a, b] = [await packLines(p, s0), await packLines(p, s1)];
    await rewritePack(p, s0, [b[0]!, ...a.slice(1)]);
    await rewritePack(p, s1, [a[0]!, ...b.slice(1)]);
  });
  await publishChanged(s3, BUCKET, 'dropped', project, async (p) => rewritePack(p, d, (await packLines(p, d)).slice(0, 1)));
  await publishChanged(s3, BUCKET, 'manifest', project, async (p) => {
    const file = join(p.recordsDir, 'current', 'manifest.json');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/"records":\d+/, '"records":1'));
  });
  // A record's entry in its shard's log.jsonl with another salt: the record, salted, is not the log's entry at that index.
  await publishChanged(s3, BUCKET, 'salted', project, async (p) => {
    const file = join(p.recordsDir, 'current', recordPath(GOLD).slice(0, 2), 'log.jsonl');
    const other = Buffer.alloc(32, 7).toString('base64');
    await writeFile(
      file,
      (await readFile(file, 'utf8')).replace(new RegExp(`("domain":"${GOLD.replace(/\./g, '\\.')}"[^\n]*"salt":")[^"]+`), `$1${other}`),
    );
  });
  const other = await packedProject(DEC);
  await publishTo(s3, BUCKET, 'unknown-key', other);
}, 120_000);
afterAll(async () => {
  await s3.close();
  await removeTempDirs();
});

/** Mirrors `prefix` into the mirror folder: refused (MIRROR_REFUSED, exit 21), its message matching `why`; the November build stays live and answering. */
async function expectRefused(prefix: string, why: RegExp): Promise<void> {
  const dir = join(await tempDir('mvr-mirror-'), 'mirror');
  await cp(mirrored, dir, { recursive: true, verbatimSymlinks: true });
  const run = await mirrorCli(s3, from(prefix), dir, project);
  const out = JSON.parse(run.stdout) as { ok: boolean; code: string; message: string };
  expect(out).toMatchObject({ ok: false, code: 'MIRROR_REFUSED' });
  expect(out.message).toMatch(why);
  expect(run.code).toBe(21);
  expect(await readlink(join(dir, 'current'))).toBe(live);
  expect(await buildsIn(dir)).toEqual([live.slice('builds/'.length)]);
  const absent = await runCli(['verify', UNAUDITED, '--mirror', dir, '--json']);
  expect(JSON.parse(absent.stdout)).toMatchObject({ code: 'NEVER_AUDITED', absence: { valid: true, build: live.slice('builds/'.length) } });
}

describe('a mirror refuses, naming what failed, and keeps its previous build live', () => {
  it('a tampered pack: its hash is not its name', async () => {
    const k = 1;
    await expectRefused('tampered', new RegExp(`pack ${k} \\(${packs[k]!.sha256}\\) does not hash to its name`));
  });

  it('a missing pack', async () => {
    const k = 2;
    await expectRefused('missing', new RegExp(`pack ${k} \\(${packs[k]!.sha256}\\) is missing from s3://${BUCKET}/missing`));
  });

  it('a record swapped between two packs: the first of them no longer hashes to its name', async () => {
    const k = 3;
    await expectRefused('swapped', new RegExp(`pack ${k} \\(${packs[k]!.sha256}\\) (does not hash to its name|ends at byte)`));
  });

  it('a record dropped from a pack: the pack ends early', async () => {
    const k = 7;
    await expectRefused(
      'dropped',
      new RegExp(`pack ${k} \\(${packs[k]!.sha256}\\) ends at byte \\d+, but the statement says it is ${packs[k]!.bytes} bytes`),
    );
  });

  it("a record whose shard log entry has another salt: it is not the log's entry, so its proof could not be served", async () => {
    await expectRefused(
      'salted',
      new RegExp(`record \\d+ \\(${GOLD.replace(/\./g, '\\.')}\\) of pack \\d+ \\([0-9a-f]{64}\\) is not entry \\d+ of the log`),
    );
  });

  it('a manifest that says another count than the statement signs (the kept builds list would show it)', async () => {
    await expectRefused('manifest', /manifest\.json says records 1, its statement \d+/);
  });

  it('a statement signed by a key the mirror does not trust: refused before its map is asked for', async () => {
    await expectRefused('unknown-key', /statement\.json does not verify: KEY_NOT_TRUSTED/);
    const read = (file: string) =>
      s3.requests.filter((r) => /^(GET|HEAD) /.test(r) && r.includes(`/${BUCKET}/unknown-key/builds/`) && r.endsWith(file));
    expect(read('/statement.json').length).toBeGreaterThan(0);
    expect(read('/domain-map')).toEqual([]);
  });

  it('the good December build goes live, November kept beside it for the readers in flight', async () => {
    await publishTo(s3, BUCKET, 'dec', project);
    const dir = mirrored;
    const run = await mirrorCli(s3, from('dec'), dir, project);
    expect(run.code).toBe(0);
    const s = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(s.build).toBe(JSON.parse(await readFile(join(project.recordsDir, 'current', 'statement.json'), 'utf8')).build);
    // Every record carries its build's issued_at: no pack of November's is one of December's.
    expect(s).toMatchObject({ packs_fetched: packs.length, packs_reused: 0 });
    expect(s.rolled_back_from).toBeUndefined();
    expect(await readlink(join(dir, 'current'))).toBe(`builds/${s.build}`);
    expect(await buildsIn(dir)).toEqual([live.slice('builds/'.length), s.build].sort());
    // The source rolled back to November: refused, naming both builds, December stays live.
    const nov = live.slice('builds/'.length);
    const issued = (id: string) => JSON.parse(readFileSync(join(dir, 'builds', id, 'statement.json'), 'utf8')).issued_at as string;
    const refused = await mirrorCli(s3, from('nov'), dir, project);
    const out = JSON.parse(refused.stdout) as { code: string; message: string };
    expect(out.code).toBe('MIRROR_REFUSED');
    expect(refused.code).toBe(21);
    expect(out.message).toContain(`build ${nov} (issued ${issued(nov)}) refused: its statement is entry`);
    expect(out.message).toContain(`live build ${s.build} (issued ${issued(s.build as string)}) stays live`);
    expect(await readlink(join(dir, 'current'))).toBe(`builds/${s.build}`);
    // Said aloud, it is taken: its packs are in the folder (the build kept), linked, none fetched.
    const back = await mirrorCli(s3, from('nov'), dir, project, ['--allow-rollback']);
    expect(JSON.parse(back.stdout)).toMatchObject({
      ok: true,
      build: nov,
      rolled_back_from: s.build,
      packs_fetched: 0,
      packs_reused: packs.length,
      bytes: 0,
    });
    expect(await readlink(join(dir, 'current'))).toBe(live);
  });
});
