/**
 * A build killed with SIGKILL in the middle: it is stopped where it cannot go on by itself (its
 * witness, a server the test holds, has the checkpoint and has not answered: records, map and
 * log are written, the swap is not), so the kill lands mid-build every time, on any machine.
 */
import type { ChildProcess } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILDS_DIR } from '../../core/layout.ts';
import { loadLogKey } from '../../keyring/log-key.ts';
import { generateWitnessKeyText, parseWitnessKey } from '../../witness/server/witness-key.ts';
import { buildArgs, spawnCli } from '../support/cli.ts';
import { holdingOrigin } from '../support/holding-origin.ts';
import { loggedProject } from '../support/logged-project.ts';
import { currentTarget, readCurrentRecords, snapshot } from '../support/outputs.ts';
import { build, removeTempDirs, tempDir } from '../support/project.ts';
import { settleWithin } from '../support/wait.ts';
import { policyText } from '../support/witness.ts';

afterAll(removeTempDirs);

/** Names of the staging folders under records/builds. */
async function stagingDirs(recordsDir: string): Promise<string[]> {
  return (await readdir(join(recordsDir, BUILDS_DIR))).filter((n) => n.startsWith('.staging-'));
}

describe('a build killed with SIGKILL', () => {
  it('leaves the previous build live and unchanged; the next build cleans up the stale lock and staging', async () => {
    const p = await loggedProject();
    await build(p);
    const liveTarget = await currentTarget(p.recordsDir);
    const first = { buildId: basename(liveTarget) };
    const liveBuild = await snapshot(join(p.recordsDir, BUILDS_DIR, first.buildId));
    const keySetBefore = await readFile(p.keySetFile);
    expect(Object.keys(liveBuild).length).toBeGreaterThan(33);

    // The next build's only witness is a server that takes the checkpoint and never answers.
    const witness = await holdingOrigin(await tempDir());
    const held = witness.hold('add-checkpoint');
    const logKey = (await loadLogKey(p.keysDir, undefined))!;
    const witnessKey = parseWitnessKey(generateWitnessKeyText('held.test/witness'), 'held');
    const policyFile = join(await tempDir(), 'witnesses.policy');
    await writeFile(policyFile, policyText({ key: logKey }, [{ name: 'held', vkey: witnessKey.vkey, url: witness.url }], 'quorum held'));

    let child: ChildProcess | undefined;
    const running = spawnCli(buildArgs(p, ['--witness-policy', policyFile], '2026-11-02T00:00:00Z'), {}, { onSpawn: (c) => (child = c) });
    await settleWithin(held.reached, 'the build reaching its witness');
    child!.kill('SIGKILL');
    const res = await running;
    await witness.close();
    expect(res.signal).toBe('SIGKILL');
    const staged = await stagingDirs(p.recordsDir);
    expect(staged).toHaveLength(1);
    expect((await readdir(join(p.recordsDir, BUILDS_DIR, staged[0]!))).length).toBeGreaterThan(0);

    // What the kill left behind: a stale lock naming the dead process, and a half-written staging folder.
    expect(JSON.parse(await readFile(join(p.recordsDir, '.build.lock'), 'utf8'))).toMatchObject({ pid: child!.pid });
    expect(await stagingDirs(p.recordsDir)).toEqual(staged);

    // The live build is untouched.
    expect(await currentTarget(p.recordsDir)).toBe(liveTarget);
    expect(await snapshot(join(p.recordsDir, BUILDS_DIR, first.buildId))).toEqual(liveBuild);
    expect(await readFile(p.keySetFile)).toEqual(keySetBefore);
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
