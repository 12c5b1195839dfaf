/**
 * A mirror never rolls back by its log: the checkpoint its live build was proven against is kept
 * with that build, and a source whose checkpoint does not extend it (a fork of the log: the same
 * keys, December built twice from November's log) is refused naming both builds, unless the
 * operator says --allow-rollback. (A source back on an older build is in mirror-refusals.test.ts.)
 */
import { readFile, readlink, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { DEC, NOV } from '../support/logged-project.ts';
import { mirrorCli, PACK_RECORDS, packedProject } from '../support/mirror.ts';
import { build, copyProject, type Project, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';
import { publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';

const BUCKET = 'mvr-mirror-rollback';
const from = (prefix: string) => `s3://${BUCKET}/${prefix}`;
let s3: TestS3;
let project: Project;
let fork: Project;
const DAY = 86_400_000;

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  project = await packedProject(NOV);
  await publishTo(s3, BUCKET, 'nov', project);
  fork = await copyProject(project);
  await build(project, { now: DEC, packRecords: PACK_RECORDS });
  await build(fork, { now: DEC + DAY, packRecords: PACK_RECORDS });
  await publishTo(s3, BUCKET, 'dec', project);
  await publishTo(s3, BUCKET, 'fork', fork);
}, 120_000);
afterAll(async () => {
  await s3.close();
  await removeTempDirs();
});

const buildOf = async (p: Project) =>
  JSON.parse(await readFile(join(p.recordsDir, 'current', 'statement.json'), 'utf8')) as { build: string; issued_at: string };
const json = (stdout: string) => JSON.parse(stdout) as { ok: boolean; code?: string; message?: string; build?: string };

describe('a mirror never rolls back', () => {
  it("a source whose checkpoint does not extend the live build's: refused naming both builds, the live one served; taken with --allow-rollback", async () => {
    const dir = join(await tempDir('mvr-mirror-'), 'mirror');
    expect((await mirrorCli(s3, from('dec'), dir, project)).code).toBe(0);
    const [dec, forked] = [await buildOf(project), await buildOf(fork)];
    const run = await mirrorCli(s3, from('fork'), dir, project);
    expect(json(run.stdout)).toMatchObject({ ok: false, code: 'MIRROR_REFUSED' });
    expect(run.code).toBe(21);
    expect(json(run.stdout).message).toContain(`build ${forked.build} (issued ${forked.issued_at}) refused: its checkpoint`);
    expect(json(run.stdout).message).toMatch(/not an append-only extension/);
    expect(json(run.stdout).message).toContain(`live build ${dec.build} (issued ${dec.issued_at}) stays live`);
    expect(await readlink(join(dir, 'current'))).toBe(`builds/${dec.build}`);
    const served = await runCli(['verify', UNAUDITED, '--mirror', dir, '--json']);
    expect(JSON.parse(served.stdout)).toMatchObject({ code: 'NEVER_AUDITED', absence: { valid: true, build: dec.build } });
    const taken = await mirrorCli(s3, from('fork'), dir, project, ['--allow-rollback']);
    expect(JSON.parse(taken.stdout)).toMatchObject({ ok: true, build: forked.build, rolled_back_from: dec.build });
    expect(await readlink(join(dir, 'current'))).toBe(`builds/${forked.build}`);
  });

  it('a live build with no checkpoint kept (a folder from before it was kept): the source is taken as it checks, and its checkpoint kept from then on', async () => {
    const dir = join(await tempDir('mvr-mirror-'), 'mirror');
    expect((await mirrorCli(s3, from('dec'), dir, project)).code).toBe(0);
    await rm(join(dir, 'current', 'public', 'log', 'checkpoint'));
    const nov = await mirrorCli(s3, from('nov'), dir, project);
    expect(json(nov.stdout)).toMatchObject({ ok: true });
    // November's checkpoint is kept with it: December, later in the log, goes on; the fork does not.
    expect(json((await mirrorCli(s3, from('fork'), dir, project)).stdout)).toMatchObject({ ok: true });
    expect(json((await mirrorCli(s3, from('dec'), dir, project)).stdout)).toMatchObject({ ok: false, code: 'MIRROR_REFUSED' });
  });
});
