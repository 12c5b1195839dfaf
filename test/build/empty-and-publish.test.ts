import { readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BUILD_STATEMENT_FILE,
  BUILDS_DIR,
  CURRENT_LINK,
  DOMAIN_MAP_FILE,
  INDEX_FILE,
  LOOKUP_ANSWERS_FILE,
  MANIFEST_FILE,
  PACK_INDEX_FILE,
} from '../../core/layout.ts';
import { buildArgs, lines, runCli, spawnCli } from '../support/cli.ts';
import { currentTarget, listFiles, readKeySet, snapshotOutputs } from '../support/outputs.ts';
import { auditsFolder, build, buildFails, makeProject, type Project, removeTempDirs, tempDir } from '../support/project.ts';

afterAll(removeTempDirs);

/** A project with a good, live build of the sample audits (a copy of the plain one); and its outputs' snapshot. */
async function builtProject(): Promise<{ p: Project; before: Awaited<ReturnType<typeof snapshotOutputs>> }> {
  const p = await makeProject();
  return { p, before: await snapshotOutputs(p) };
}

/** The id of the live build. */
const liveId = async (p: Project) => basename(await currentTarget(p.recordsDir));

// Every case has a project of its own: all run side by side, the longest (three builds each) first.
describe.concurrent('builds that publish and builds that must not', () => {
  describe.concurrent('publishing', () => {
    it('a build lock held by a live process refuses a second build and leaves everything as it was', async () => {
      const { p, before } = await builtProject();
      const lock = join(p.recordsDir, '.build.lock');
      await writeFile(lock, String(process.pid)); // this test process: alive
      const locked = await snapshotOutputs(p);
      const error = await buildFails(p);
      expect(error.code).toBe('BUILD_FAILED');
      expect(error.message).toContain(String(process.pid));
      expect(await snapshotOutputs(p)).toEqual(locked);
      expect(locked.records).toEqual({ ...before.records, '.build.lock': expect.stringMatching(/^file:/) });
    });

    it('with --keep 2, keeps the live build and the one before it, and prunes older ones', async () => {
      // The plain project's build (--now 2026-11-01) is the first of three.
      const { p } = await builtProject();
      const ids = [await liveId(p)];
      for (const day of ['02', '03'])
        ids.push((await build(p, { now: Date.parse(`2026-11-${day}T00:00:00Z`), workers: 1, keep: 2 })).buildId);
      expect((await readdir(join(p.recordsDir, BUILDS_DIR))).sort()).toEqual([ids[1], ids[2]].sort());
      expect(await currentTarget(p.recordsDir)).toBe(join(BUILDS_DIR, ids[2]!));
    });

    it('keeps the build that was live before the current one even when --now goes backwards, and even with --keep 1', async () => {
      // The plain project's build (--now 2026-11-01) is the first of three, each dated a day before the one before.
      const { p } = await builtProject();
      const ids = [await liveId(p)];
      for (const day of ['10-31', '10-30'])
        ids.push((await build(p, { now: Date.parse(`2026-${day}T00:00:00Z`), workers: 1, keep: 1 })).buildId);
      expect(await currentTarget(p.recordsDir)).toBe(join(BUILDS_DIR, ids[2]!));
      // Live: the 3rd build; the one before it: the 2nd. The 1st is the one to prune.
      expect((await readdir(join(p.recordsDir, BUILDS_DIR))).sort()).toEqual([ids[1], ids[2]].sort());
    });
  });

  describe.concurrent('an empty audits folder', () => {
    it('is refused (BUILD_FAILED) and the live build stays as it was; the CLI exits 1', async () => {
      const { p, before } = await builtProject();
      const empty = await tempDir('mvr-empty-audits-');
      await writeFile(join(empty, 'README.md'), 'not an audit\n');
      const error = await buildFails(p, { auditsDir: empty });
      expect(error.code).toBe('BUILD_FAILED');
      expect(await snapshotOutputs(p)).toEqual(before);

      const res = await runCli(buildArgs({ ...p, auditsDir: empty }));
      expect(res.code, res.stderr).toBe(1);
      expect(lines(res.stderr).at(-1)).toMatch(/^mvr: BUILD_FAILED: .*--allow-empty/);
      expect(await snapshotOutputs(p)).toEqual(before);
    });

    it('with --allow-empty publishes an empty build (every record withdrawn) and the key set', async () => {
      const { p } = await builtProject();
      const empty = await tempDir('mvr-empty-audits-');
      const res = await runCli(buildArgs({ ...p, auditsDir: empty }, ['--allow-empty', '--json']));
      expect(res.code, res.stderr).toBe(0);
      const summary = JSON.parse(res.stdout) as { ok: boolean; records: number; files: number; build_id: string; key_id: string };
      expect(summary).toMatchObject({ ok: true, records: 0, files: 0, key_id: p.kid });
      expect(await currentTarget(p.recordsDir)).toBe(join(BUILDS_DIR, summary.build_id));
      // No record: the manifest, the (empty) index, domain map and pack index, the statement (no pack), the compact answers (two empty buckets), and the change feed against the build before (every record dropped).
      const files = [...(await listFiles(join(p.recordsDir, CURRENT_LINK))).keys()];
      expect(files.filter((f) => !f.startsWith('changes/')).sort()).toEqual([
        DOMAIN_MAP_FILE,
        INDEX_FILE,
        LOOKUP_ANSWERS_FILE,
        MANIFEST_FILE,
        PACK_INDEX_FILE,
        BUILD_STATEMENT_FILE,
      ]);
      // The empty map's root is SHA-256 of nothing: every domain provably absent, signed.
      const statement = JSON.parse(await readFile(join(p.recordsDir, CURRENT_LINK, BUILD_STATEMENT_FILE), 'utf8'));
      expect(statement).toMatchObject({
        build: summary.build_id,
        records: 0,
        domain_map: { size: 0, root: '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=' },
        key_id: p.kid,
      });
      const manifest = JSON.parse(await readFile(join(p.recordsDir, CURRENT_LINK, MANIFEST_FILE), 'utf8'));
      expect(manifest).toMatchObject({ records: 0, by_status: {}, by_tier: {}, key_id: p.kid });
      expect((await readKeySet(p.publicDir)).keySet.keys.map((k) => k.kid)).toEqual([p.kid]);
    });

    it('a folder whose only audit file is empty is refused too, without --allow-empty', async () => {
      const { p, before } = await builtProject();
      const auditsDir = await auditsFolder({ 'audits.jsonl': '', 'more.json': '[]' }, false);
      const error = await buildFails(p, { auditsDir });
      expect(error.code).toBe('BUILD_FAILED');
      expect(await snapshotOutputs(p)).toEqual(before);
    });

    it('a missing audits folder fails the build even with --allow-empty', async () => {
      const { p, before } = await builtProject();
      const error = await buildFails(p, { auditsDir: join(p.root, 'no-such-audits-folder'), allowEmpty: true });
      expect(error.code).toBe('BUILD_FAILED');
      expect(await snapshotOutputs(p)).toEqual(before);
    });

    it('a missing audits folder fails the build without --allow-empty', async () => {
      const { p, before } = await builtProject();
      const error = await buildFails(p, { auditsDir: join(p.root, 'no-such-audits-folder') });
      expect(error.code).toBe('BUILD_FAILED');
      expect(await snapshotOutputs(p)).toEqual(before);
    });
  });
});

describe('the --json summary', () => {
  it("reports the build's own peak memory, not its parent's (a parent holding 300 MB runs the CLI)", async () => {
    const p = await makeProject({ samples: true, sign: true, build: false });
    // getrusage's maxRSS would carry this across fork and exec into the child's figure. Nearly three
    // times the build's own peak here (about 106 MB); every MB of it is paged in, at about 4 ms of CPU.
    const ballastMb = 300;
    let ballast: Buffer | null = Buffer.alloc(ballastMb * 1024 * 1024, 1);
    try {
      // A process of its own: its peak memory is what is checked.
      const res = await spawnCli(buildArgs(p, ['--json']));
      expect(res.code, res.stderr).toBe(0);
      const summary = JSON.parse(res.stdout) as { peak_rss_mb: number; records: number };
      expect(summary.records).toBeGreaterThan(0);
      // A figure of the build's own (a Node process has some), and not the parent's: no budget
      // for the build's memory is checked here (that is the benchmark's).
      expect(summary.peak_rss_mb).toBeGreaterThan(0);
      expect(summary.peak_rss_mb).toBeLessThan(ballastMb);
      expect(ballast[ballast.length - 1]).toBe(1);
    } finally {
      ballast = null;
    }
  });
});
