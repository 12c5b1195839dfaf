/**
 * `mvr mirror` of a bucket: a build published by `mvr publish` (two records a pack, so many
 * packs) mirrored into an empty folder, checked whole and made live; answered offline from there;
 * a second run fetches nothing; an interrupted run continues its packs where it stopped.
 */
import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseKeySet } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mirrorBuild } from '../../mirror/mirror.ts';
import { openMirrorSource } from '../../mirror/source.ts';
import { s3ConfigFromEnv } from '../../storage/s3/bucket.ts';
import { runCli } from '../support/cli.ts';
import { NOV } from '../support/logged-project.ts';
import { mirrorCli, packedProject, packsOf } from '../support/mirror.ts';
import { GOLD, type Project, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';
import { publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';

const BUCKET = 'mvr-mirror';
const FROM = `s3://${BUCKET}/prod`;
let s3: TestS3;
let project: Project;
let packs: { sha256: string; bytes: number }[];

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  project = await packedProject(NOV);
  packs = await packsOf(project);
  await publishTo(s3, BUCKET, 'prod', project);
}, 60_000);
afterAll(async () => {
  await s3.close();
  await removeTempDirs();
});

const json = (stdout: string) => JSON.parse(stdout) as Record<string, any>;

describe('mvr mirror of a bucket', () => {
  it('mirrors the live build into an empty folder, every pack and record checked, and makes it live', async () => {
    const dir = join(await tempDir('mvr-mirror-'), 'mirror');
    const run = await mirrorCli(s3, FROM, dir, project);
    expect(run.stderr).not.toMatch(/MIRROR_REFUSED/);
    expect(run.code).toBe(0);
    const s = json(run.stdout);
    const statement = await readFile(join(project.recordsDir, 'current', 'statement.json'));
    const { build, records } = JSON.parse(statement.toString()) as { build: string; records: number };
    expect(packs.length).toBeGreaterThan(10);
    expect(s).toMatchObject({ ok: true, build, unchanged: false, packs_fetched: packs.length, packs_reused: 0, records_verified: records });
    expect(s.bytes).toBe(packs.reduce((a, p) => a + p.bytes, 0));
    expect(await readlink(join(dir, 'current'))).toBe(`builds/${build}`);
    // The build's files as the build wrote them: statement, map, pack index and lookup index (both rebuilt here) and packs, byte for byte.
    for (const file of ['statement.json', 'domain-map', 'pack-index', 'index.jsonl', 'manifest.json', 'log-checkpoint'])
      expect((await readFile(join(dir, 'current', file))).equals(await readFile(join(project.recordsDir, 'current', file)))).toBe(true);
    expect((await readdir(join(dir, 'current', 'packs'))).sort()).toEqual(packs.map((p) => `${p.sha256}.jsonl`).sort());
    // What serving it offline needs: the key set it verified against, pinned in mirror.json, and the log key.
    const mirror = JSON.parse(await readFile(join(dir, 'mirror.json'), 'utf8')) as { from: string; trusted_keys: unknown };
    expect(mirror.from).toBe(FROM);
    expect(parseKeySet(mirror.trusted_keys).keys.map((k) => k.kid)).toEqual([project.kid]);
    expect(await readFile(join(dir, 'public', '.well-known', 'merchant-verify-keys.json'), 'utf8')).toBe(
      await readFile(project.keySetFile, 'utf8'),
    );
    // A second run: the build is live already, nothing is fetched.
    const again = await mirrorCli(s3, FROM, dir, project);
    expect(again.code).toBe(0);
    expect(json(again.stdout)).toMatchObject({ ok: true, build, unchanged: true, packs_fetched: 0, bytes: 0 });
    // Offline: a never-audited domain's absence, proven by the mirror's map and its statement in the mirror's log.
    const absent = await runCli(['verify', UNAUDITED, '--mirror', dir, '--json']);
    expect(absent.stderr).toBe('');
    expect(json(absent.stdout)).toMatchObject({ code: 'NEVER_AUDITED', domain: UNAUDITED });
    expect(absent.code).toBe(15);
    expect(json(absent.stdout).absence).toMatchObject({ valid: true, build });
    // Offline: an audited domain's record, read from the mirror's packs and verified against the keys the mirror pinned.
    const audited = await runCli(['verify', GOLD, '--mirror', dir, '--json']);
    expect(json(audited.stdout)).toMatchObject({ valid: true, code: null, domain: GOLD });
    expect(audited.code).toBe(0);
  });

  it('never takes over a records folder mvr build writes (a live build and no mirror.json)', async () => {
    const run = await mirrorCli(s3, FROM, project.recordsDir, project);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, code: 'INVALID_CONFIG' });
    expect(run.code).toBe(2);
  });

  it('shows bytes, packs and the time left on stderr as it goes', async () => {
    const dir = join(await tempDir('mvr-mirror-'), 'mirror');
    const run = await runCli(['mirror', '--from', FROM, '--to', dir, '--trusted-keys', project.keySetFile, '--json'], {
      ...s3.env,
      MVR_PROGRESS_MS: '1',
    });
    expect(run.code).toBe(0);
    const last = run.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .at(-1)!;
    expect(last).toMatchObject({ progress: 'mirror', done: true, total_packs: packs.length, packs: packs.length });
    expect(last.bytes).toBe(packs.reduce((a, p) => a + p.bytes, 0));
  });

  it('an interrupted run keeps what it fetched, and the next run continues the pack it was in with a ranged read', async () => {
    const dir = join(await tempDir('mvr-mirror-'), 'mirror');
    const trustedKeys = parseKeySet(JSON.parse(await readFile(project.keySetFile, 'utf8')));
    const open = () => openMirrorSource(FROM, { store: { url: FROM, s3: s3ConfigFromEnv(s3.env), flag: '--from' } });
    const stop = new AbortController();
    let first = 0;
    const source = open();
    const interrupted = await mirrorBuild({
      to: dir,
      source,
      trustedKeys,
      concurrency: 1,
      chunkBytes: 100,
      signal: stop.signal,
      onProgress: (p) => {
        first = p.bytes;
        if (p.bytes >= 300) stop.abort('SIGINT');
      },
    }).then(
      () => null,
      (error: unknown) => error as { code?: string },
    );
    await source.close();
    expect(interrupted?.code).toBe('INTERRUPTED');
    expect(await stat(join(dir, 'current')).catch(() => null)).toBeNull();
    const parts = await readdir(join(dir, '.packs'));
    expect(parts.some((n) => n.endsWith('.part'))).toBe(true);
    const again = open();
    const s = await mirrorBuild({ to: dir, source: again, trustedKeys, chunkBytes: 100 }).finally(() => again.close());
    const total = packs.reduce((a, p) => a + p.bytes, 0);
    expect(first).toBeGreaterThanOrEqual(300);
    expect(s.bytes).toBe(total - first);
    expect(s.recordsVerified).toBe(s.records);
    expect(await readdir(join(dir, '.packs'))).toEqual([]);
  });
});
