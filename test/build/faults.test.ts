import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateAudits } from '../../bench/generate-audits.ts';
import { buildArgs, cliEnv } from '../support/cli.ts';
import { currentTarget, filesHeldOpenUnder, snapshotOutputs } from '../support/outputs.ts';
import { skippedUnless } from '../support/programs.ts';
import { buildFails, makeProject, type Project, ROOT, removeTempDirs } from '../support/project.ts';
import { waitForClose } from '../support/wait.ts';

/**
 * Build faults: whatever fails mid-build (the disk fills up, the records folder refuses writes,
 * a file size limit), the answer is one clear BUILD_FAILED error and the previous build stays
 * live, byte for byte.
 */
const mounts: string[] = [];
afterAll(async () => {
  for (const m of mounts) spawnSync('umount', [m]);
  await removeTempDirs();
});

async function bigAudits(p: Project, count: number): Promise<void> {
  await mkdir(join(p.auditsDir, 'bulk'), { recursive: true });
  const out = createWriteStream(join(p.auditsDir, 'bulk', 'generated.jsonl'));
  await generateAudits(count, 7, out);
  out.end();
  await once(out, 'finish');
}

/** Mounting needs root and CAP_SYS_ADMIN: true on this project's machines (CI included). */
const canMount = spawnSync('mount', ['--version']).status === 0 && process.getuid?.() === 0;
const canChattr = spawnSync('chattr', ['--help']).status !== null && spawnSync('which', ['chattr']).status === 0;

describe.concurrent('build faults leave the previous build live', () => {
  // The records signed on the build's thread (a small build's default) and in a worker thread.
  for (const [where, workers] of [
    ["on the build's thread", 0],
    ['in a worker thread', 1],
  ] as const) {
    it.runIf(canMount)(
      skippedUnless(
        canMount,
        'mounting a tmpfs needs root',
        `disk full (ENOSPC on a 1 MiB tmpfs), the records signed ${where}: BUILD_FAILED naming the cause, old records intact`,
      ),
      async () => {
        // The plain project's build, copied onto a records folder of its own on a 1 MiB tmpfs.
        const plain = await makeProject();
        const p: Project = { ...plain, recordsDir: join(plain.root, 'records-on-tmpfs') };
        await mkdir(p.recordsDir);
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', p.recordsDir]);
        mounts.push(p.recordsDir);
        await cp(plain.recordsDir, p.recordsDir, { recursive: true, verbatimSymlinks: true });
        const before = await snapshotOutputs(p);
        const live = await currentTarget(p.recordsDir);
        await bigAudits(p, 3000); // ~3000 files of 4 KiB pages: far beyond 1 MiB
        const error = await buildFails(p, { workers });
        expect(error.code).toBe('BUILD_FAILED');
        expect(error.message).toMatch(/^writing records failed: ENOSPC: .*; the previous build is still live$/);
        // No spill file held open (a removed one would still hold its bytes on the full disk).
        expect(filesHeldOpenUnder(p.recordsDir)).toEqual([]);
        expect(await snapshotOutputs(p)).toEqual(before);
        expect(await currentTarget(p.recordsDir)).toBe(live);
      },
    );
  }

  it.runIf(canChattr)(
    skippedUnless(
      canChattr,
      'chattr is not installed',
      'a records folder that refuses writes (immutable, EPERM even for root): BUILD_FAILED, old records intact',
    ),
    async () => {
      const p = await makeProject(); // a copy of the plain project: a live build
      const before = await snapshotOutputs(p);
      const builds = join(p.recordsDir, 'builds');
      execFileSync('chattr', ['+i', builds]);
      try {
        const error = await buildFails(p);
        expect(error.code).toBe('BUILD_FAILED');
        expect(error.message).toMatch(/EPERM|operation not permitted/i);
      } finally {
        execFileSync('chattr', ['-i', builds]);
      }
      expect(await snapshotOutputs(p)).toEqual(before);
    },
  );

  it('a file size limit (ulimit -f 0, EFBIG) through the CLI: exit 1, one clear line, old records intact', async () => {
    const p = await makeProject(); // a copy of the plain project: a live build
    const before = await snapshotOutputs(p);
    const args = buildArgs(p)
      .map((a) => `'${a}'`)
      .join(' ');
    // Not spawnSync: the other cases run meanwhile.
    const child = spawn('bash', ['-c', `ulimit -f 0; exec '${process.execPath}' bin/mvr.js ${args}`], {
      cwd: ROOT,
      env: cliEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const { code: status } = await waitForClose(child, 'mvr build under ulimit -f 0', () => stderr);
    expect(status).toBe(1);
    expect(stderr).toMatch(/mvr: BUILD_FAILED: .*(EFBIG|too large)/i);
    expect(stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    expect(await snapshotOutputs(p)).toEqual(before);
  });
});
