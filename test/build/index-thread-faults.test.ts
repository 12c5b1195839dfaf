import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, createWriteStream, openSync, readdirSync, readlinkSync, writeSync } from 'node:fs';
import { cp, mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateAudits } from '../../bench/generate-audits.ts';
import type { BuildPhase } from '../../builder/options.ts';
import { BUILDS_DIR } from '../../core/layout.ts';
import { currentTarget, snapshotOutputs } from '../support/outputs.ts';
import { skippedUnless } from '../support/programs.ts';
import { buildFails, makeProject, type Project, removeTempDirs } from '../support/project.ts';

/**
 * A fault inside the index or the map, after every record was written: the disk fills up as that
 * step starts. In their own thread (as from INDEX_THREAD_FROM records) or on the build's thread, the
 * answer is the same one clear BUILD_FAILED naming the step and the cause (its code kept), and the
 * previous build stays live, byte for byte, with no staging folder, no file held open and no thread
 * left behind.
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

/** A copy of the plain project, its records folder on a tmpfs of its own, and some audits more (so a new build would go live). */
async function projectOnTmpfs(): Promise<{ p: Project; disk: string }> {
  const plain = await makeProject();
  const disk = join(plain.root, 'disk');
  await mkdir(disk);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', disk]);
  mounts.push(disk);
  const p: Project = { ...plain, recordsDir: join(disk, 'records') };
  await cp(plain.recordsDir, p.recordsDir, { recursive: true, verbatimSymlinks: true });
  await mkdir(join(p.auditsDir, 'bulk'));
  const out = createWriteStream(join(p.auditsDir, 'bulk', 'generated.jsonl'));
  await generateAudits(200, 7, out);
  out.end();
  await once(out, 'finish');
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

/** The files this process holds open under `dir` (a file removed since still holds its bytes). */
function openUnder(dir: string): string[] {
  const held: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    const target = readlinkSafe(`/proc/self/fd/${fd}`);
    if (target?.startsWith(`${dir}/`)) held.push(target);
  }
  return held;
}

function readlinkSafe(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null; // closed since it was listed
  }
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
        expect(openUnder(disk)).toEqual([]);
        await rm(join(disk, FILLER));
        expect(await readdir(disk)).toEqual(['records']);
        expect(await readdir(join(p.recordsDir, BUILDS_DIR))).toEqual([basename(live)]);
        expect(await snapshotOutputs(p)).toEqual(before);
        expect(await currentTarget(p.recordsDir)).toBe(live);
      },
    );
  }
});
