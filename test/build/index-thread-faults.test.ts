import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, createWriteStream, openSync, readdirSync, statSync, writeSync } from 'node:fs';
import { cp, mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateAudits } from '../../bench/generate-audits.ts';
import type { BuildPhase } from '../../builder/options.ts';
import { SPILL_DIR } from '../../builder/shard-records.ts';
import type { MvrError } from '../../core/errors/errors.ts';
import { BUILDS_DIR } from '../../core/layout.ts';
import { currentTarget, filesHeldOpenUnder, snapshotOutputs } from '../support/outputs.ts';
import { needing, program, skippedUnless } from '../support/programs.ts';
import { buildFails, makeProject, type Project, removeTempDirs } from '../support/project.ts';

/**
 * A fault inside the index or the map, after every record was written: the disk fills up as that
 * step starts, or a file size limit cuts the pack's write short. In their own thread (as from
 * INDEX_THREAD_FROM records) or on the build's thread, the answer is the same one clear BUILD_FAILED
 * naming the step and the cause (its code kept), and the previous build stays live, byte for byte,
 * with no staging folder, no file held open and no thread left behind.
 */
const mounts: string[] = [];
afterAll(async () => {
  // Lazily: a file a failed test left open would keep the mount busy.
  for (const m of mounts) spawnSync('umount', ['--lazy', m]);
  await removeTempDirs();
});

/** Mounting needs root and CAP_SYS_ADMIN: true on this project's machines (CI included). */
const canMount = spawnSync('mount', ['--version']).status === 0 && process.getuid?.() === 0;

const FILLER = 'filler';

/** A copy of the plain project with 200 audits more: its build is a new one, which would go live. */
async function projectWithMoreAudits(): Promise<Project> {
  const p = await makeProject();
  await mkdir(join(p.auditsDir, 'bulk'));
  const out = createWriteStream(join(p.auditsDir, 'bulk', 'generated.jsonl'));
  await generateAudits(200, 7, out);
  out.end();
  await once(out, 'finish');
  return p;
}

/** {@link projectWithMoreAudits}, its records folder on a tmpfs of its own. */
async function projectOnTmpfs(): Promise<{ p: Project; disk: string }> {
  const plain = await projectWithMoreAudits();
  const disk = join(plain.root, 'disk');
  await mkdir(disk);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', disk]);
  mounts.push(disk);
  const p: Project = { ...plain, recordsDir: join(disk, 'records') };
  await cp(plain.recordsDir, p.recordsDir, { recursive: true, verbatimSymlinks: true });
  return { p, disk };
}

/**
 * Takes every byte left on the file system of `dir`. Called (synchronously) as the build announces a
 * step, it leaves that step no room whatever the bytes the steps before it wrote: no tmpfs to size
 * from them, and the steps before it never meet the fault.
 */
function fillUp(dir: string): void {
  const fd = openSync(join(dir, FILLER), 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    while (writeSync(fd, chunk) > 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Sets this process's file size limit (all its threads', as `ulimit -f` would): the soft limit only,
 * which a process may raise again up to its hard one.
 */
function limitFileSize(bytes: number | 'unlimited'): void {
  execFileSync('prlimit', ['--pid', String(process.pid), `--fsize=${bytes}:`]);
}

/** The bytes the records phase spilled into the staging folder of the build running in `recordsDir`. */
function spilledBytes(recordsDir: string): number {
  const builds = join(recordsDir, BUILDS_DIR);
  const [staging, ...more] = readdirSync(builds).filter((name) => name.startsWith('.staging-'));
  expect(more).toEqual([]);
  const spill = join(builds, staging!, SPILL_DIR);
  return readdirSync(spill).reduce((sum, name) => sum + statSync(join(spill, name)).size, 0);
}

/** This process's threads, by their kernel id. */
function threads(): Set<string> {
  return new Set(readdirSync('/proc/self/task'));
}

// One test at a time: the threads this process has before and after a build are compared.
describe.sequential('a fault inside the index or map leaves the previous build live', () => {
  const cases = [
    { step: 'index', where: 'in their own thread', indexThreadFrom: 0 },
    { step: 'index', where: "on the build's thread", indexThreadFrom: Number.POSITIVE_INFINITY },
    { step: 'map', where: 'in their own thread', indexThreadFrom: 0 },
    { step: 'map', where: "on the build's thread", indexThreadFrom: Number.POSITIVE_INFINITY },
  ] as const;
  for (const { step, where, indexThreadFrom } of cases) {
    it.runIf(canMount)(
      skippedUnless(
        canMount,
        'mounting a tmpfs needs root',
        `the disk fills as the ${step} starts (${where}): one BUILD_FAILED naming the step and ENOSPC, the previous build live byte for byte, no file or thread left`,
      ),
      async () => {
        const { p, disk } = await projectOnTmpfs();
        const before = await snapshotOutputs(p);
        const live = await currentTarget(p.recordsDir);
        const phases: BuildPhase[] = [];
        const threadsBefore = threads();
        const started = () => [...threads()].filter((t) => !threadsBefore.has(t));
        let startedAtStep: string[] = [];
        const error = await buildFails(p, {
          indexThreadFrom,
          onPhase: (name) => {
            phases.push(name);
            if (name !== step) return;
            startedAtStep = started();
            fillUp(disk);
          },
        });
        expect(phases.at(-1)).toBe(step); // the records (and, for the map, the index) were written
        // As the map starts, the thread the index ran in is alive, waiting for it (the build's workers are gone).
        if (step === 'map') expect(startedAtStep).toHaveLength(indexThreadFrom === 0 ? 1 : 0);
        expect(error.code).toBe('BUILD_FAILED');
        expect(error.message).toMatch(/^writing the index and domain map failed: ENOSPC: .*; the previous build is still live$/);
        expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOSPC');
        // Nothing left behind: no thread, no file held open (a removed one would still hold its bytes), no staging folder.
        expect(started()).toEqual([]);
        expect(filesHeldOpenUnder(disk)).toEqual([]);
        await rm(join(disk, FILLER));
        expect(await readdir(disk)).toEqual(['records']);
        expect(await readdir(join(p.recordsDir, BUILDS_DIR))).toEqual([basename(live)]);
        expect(await snapshotOutputs(p)).toEqual(before);
        expect(await currentTarget(p.recordsDir)).toBe(live);
      },
    );
  }

  const prlimit = program('prlimit', 'util-linux');
  for (const { where, indexThreadFrom } of cases.filter((c) => c.step === 'index')) {
    it.runIf(prlimit.path !== null)(
      needing(
        prlimit,
        `a file size limit that cuts the pack's write short (${where}): refused, one BUILD_FAILED naming the index and EFBIG, the previous build live byte for byte, no file or thread left`,
      ),
      async () => {
        const p = await projectWithMoreAudits();
        const before = await snapshotOutputs(p);
        const live = await currentTarget(p.recordsDir);
        const threadsBefore = threads();
        let error: MvrError;
        try {
          error = await buildFails(p, {
            indexThreadFrom,
            onPhase: (name) => {
              // Only the index meets the limit: half the bytes the records phase spilled is over the
              // index file, under the one pack those records make (written at once, under 1 MiB).
              if (name === 'index') limitFileSize(Math.floor(spilledBytes(p.recordsDir) / 2));
              if (name === 'map') limitFileSize('unlimited');
            },
          });
        } finally {
          limitFileSize('unlimited');
        }
        expect(error.code).toBe('BUILD_FAILED');
        expect(error.message).toMatch(/^writing the index and domain map failed: EFBIG: .*; the previous build is still live$/);
        expect((error.cause as NodeJS.ErrnoException).code).toBe('EFBIG');
        expect([...threads()].filter((t) => !threadsBefore.has(t))).toEqual([]);
        expect(filesHeldOpenUnder(p.recordsDir)).toEqual([]);
        expect(await readdir(join(p.recordsDir, BUILDS_DIR))).toEqual([basename(live)]);
        expect(await snapshotOutputs(p)).toEqual(before);
        expect(await currentTarget(p.recordsDir)).toBe(live);
      },
    );
  }
});
