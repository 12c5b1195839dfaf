import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateAudits } from '../../bench/generate-audits.ts';
import { BUILDS_DIR } from '../../core/layout.ts';
import { buildArgs, spawnCli } from '../support/cli.ts';
import { currentTarget, readCurrentRecords, snapshot } from '../support/outputs.ts';
import { build, makeProject, removeTempDirs, tempDir } from '../support/project.ts';

afterAll(removeTempDirs);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Names of the staging folders under records/builds. */
async function stagingDirs(recordsDir: string): Promise<string[]> {
  return (await readdir(join(recordsDir, BUILDS_DIR))).filter((n) => n.startsWith('.staging-'));
}

describe('a build killed with SIGKILL', () => {
  it('leaves the previous build live and unchanged; the next build cleans up the stale lock and staging', async () => {
    const p = await makeProject(); // a copy of the plain project: one live build
    const liveTarget = await currentTarget(p.recordsDir);
    const first = { buildId: basename(liveTarget) };
    const liveBuild = await snapshot(join(p.recordsDir, BUILDS_DIR, first.buildId));
    const publicBefore = await snapshot(p.publicDir);
    expect(Object.keys(liveBuild).length).toBeGreaterThan(33);

    // 30,000 audits take several seconds to build on two cores: plenty of time to kill it mid-way.
    const bigAudits = await tempDir('mvr-big-audits-');
    const out = createWriteStream(join(bigAudits, 'big.jsonl'));
    await generateAudits(30_000, 7, out);
    out.end();
    await once(out, 'finish');

    let child: ChildProcess | undefined;
    const running = spawnCli(
      buildArgs({ ...p, auditsDir: bigAudits }, ['--now', '2026-11-02T00:00:00Z']),
      {},
      { onSpawn: (c) => (child = c) },
    );
    let exited = false;
    void running.then(() => (exited = true));
    // Wait until the build is visibly writing records into its staging folder, then kill it.
    const started = Date.now();
    let staged: string[] = [];
    while (!exited && Date.now() - started < 15_000) {
      staged = await stagingDirs(p.recordsDir);
      const shards = staged.length ? await readdir(join(p.recordsDir, BUILDS_DIR, staged[0]!)).catch(() => []) : [];
      if (shards.length > 0) break;
      await sleep(20);
    }
    expect(exited, 'the build finished before it could be killed').toBe(false);
    child!.kill('SIGKILL');
    const res = await running;
    expect(res.signal).toBe('SIGKILL');
    expect(staged).toHaveLength(1);

    // What the kill left behind: a stale lock naming the dead process, and a half-written staging folder.
    expect(Number(await readFile(join(p.recordsDir, '.build.lock'), 'utf8'))).toBe(child!.pid);
    expect(await stagingDirs(p.recordsDir)).toEqual(staged);

    // The live build is untouched.
    expect(await currentTarget(p.recordsDir)).toBe(liveTarget);
    expect(await snapshot(join(p.recordsDir, BUILDS_DIR, first.buildId))).toEqual(liveBuild);
    expect(await snapshot(p.publicDir)).toEqual(publicBefore);
    expect((await readCurrentRecords(p.recordsDir)).size).toBe(33);

    // A new build takes over the stale lock, removes the staging folder and publishes.
    const next = await build(p, { now: Date.parse('2026-12-02T00:00:00Z') });
    expect(next.records).toBe(33);
    expect(await currentTarget(p.recordsDir)).toBe(join(BUILDS_DIR, next.buildId));
    expect(await stagingDirs(p.recordsDir)).toEqual([]);
    await expect(stat(join(p.recordsDir, '.build.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
    for (const { record } of (await readCurrentRecords(p.recordsDir)).values()) expect(record.issued_at).toBe('2026-12-02T00:00:00.000Z');
    // The previous build is kept for in-flight readers.
    expect((await readdir(join(p.recordsDir, BUILDS_DIR))).sort()).toEqual([first.buildId, next.buildId].sort());
  });
});
