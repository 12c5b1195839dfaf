/**
 * `mvr build --witness-policy` with three real witnesses (`mvr witness` in process) and a quorum
 * of two: a build goes live with two of them, the next is cosigned after each checks its
 * consistency proof, a build short of the quorum does not go live but its checkpoint is never
 * rolled back, and the next build extends the log the witnesses saw.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTlogProof } from '#shared';
import { loadLogKey } from '../../keyring/log-key.ts';
import { cleanup } from '../support/gateway.ts';
import { gatewayOver, logDir } from '../support/logged-project.ts';
import { GOLD, removeTempDirs } from '../support/project.ts';
import { checkpointSize, cosignersOf, type WitnessedProject, witnessedProject } from '../support/witnessed-project.ts';

let w: WitnessedProject;
beforeAll(async () => {
  w = await witnessedProject();
});
afterAll(async () => {
  await cleanup();
  await w.close();
  await removeTempDirs();
});

const liveCheckpoint = () => readFile(join(w.p.recordsDir, 'current', 'log-checkpoint'), 'utf8');
const logCheckpoint = () => readFile(join(logDir(w.p), 'checkpoint'), 'utf8');
const cosigners = (note: string, policy: string) => cosignersOf(note, policy, w.witnesses[0]!.now.ms);
const summaryOf = (stdout: string) => JSON.parse(stdout) as { witnesses: { witness: string; ok: boolean; code?: string }[] };

describe.sequential('a build with a policy of three witnesses and a quorum of two', () => {
  it('goes live with two of them up, the cosigned checkpoint in the build and in public/log', async () => {
    const policy = await w.policyWith(['c']);
    const run = await w.build('2026-11-01T00:00:00Z');
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run.stdout).witnesses).toMatchObject([
      { witness: 'a', ok: true },
      { witness: 'b', ok: true },
      { witness: 'c', ok: false, code: 'WITNESS_UNAVAILABLE' },
    ]);
    expect(run.stderr).toMatch(/"phase":"witness","witness":"c","code":"WITNESS_UNAVAILABLE","message":"witness c could not be reached/);
    const live = await liveCheckpoint();
    expect(await logCheckpoint()).toBe(live);
    expect(cosigners(live, policy)).toEqual(['a', 'b']);
  });

  it('cosigns the next build after each witness checked its consistency proof from the size it cosigned', async () => {
    const policy = await w.policyWith(['c']);
    const before = checkpointSize(await liveCheckpoint());
    const run = await w.build('2026-11-10T00:00:00Z');
    expect(run.code, run.stderr).toBe(0);
    const live = await liveCheckpoint();
    expect(checkpointSize(live)).toBeGreaterThan(before);
    expect(cosigners(live, policy)).toEqual(['a', 'b']);
  });

  it('does not go live with one witness, keeps the checkpoint it sent, and the next build extends it', async () => {
    const liveBefore = await liveCheckpoint();
    const manifest = () => readFile(join(w.p.recordsDir, 'current', 'manifest.json'), 'utf8');
    const manifestBefore = await manifest();
    await w.policyWith(['b', 'c']);
    const short = await w.build('2026-11-20T00:00:00Z');
    expect(short.code, short.stderr).toBe(19);
    expect(JSON.parse(short.stdout)).toMatchObject({ ok: false, code: 'WITNESS_QUORUM_NOT_MET' });
    expect(JSON.parse(short.stdout).message).toMatch(/witness b could not be reached.*witness c could not be reached/);
    // The previous build stays live; the log's checkpoint is the one witness a saw, its tiles kept.
    expect(await liveCheckpoint()).toBe(liveBefore);
    expect(await manifest()).toBe(manifestBefore);
    const sent = await logCheckpoint();
    expect(checkpointSize(sent)).toBeGreaterThan(checkpointSize(liveBefore));
    expect((await readdir(join(logDir(w.p), 'tile', '0'))).length).toBeGreaterThan(0);
    // Meanwhile the gateway serves the log as the witnesses saw it, and proofs against the live build's own checkpoint.
    const g = await gatewayOver(w.p);
    expect((await g.request('/log/checkpoint')).text).toBe(sent);
    expect(parseTlogProof((await g.request(`/v1/proof?domain=${GOLD}`)).text).checkpoint).toBe(liveBefore);
    await g.close();

    // The witnesses back: a (which saw the checkpoint that did not go live), b and c all accept the next build.
    const policy = await w.policyWith([]);
    const next = await w.build('2026-11-25T00:00:00Z');
    expect(next.code, next.stderr).toBe(0);
    expect(summaryOf(next.stdout).witnesses.map((r) => r.ok)).toEqual([true, true, true]);
    const live = await liveCheckpoint();
    expect(checkpointSize(live)).toBeGreaterThan(checkpointSize(sent));
    expect(cosigners(live, policy)).toEqual(['a', 'b', 'c']);
  });

  it('with "quorum none" sends nothing and writes the checkpoint signed by the log alone', async () => {
    const key = (await loadLogKey(w.p.keysDir, undefined))!;
    await writeFile(w.policyFile, `log ${key.vkey}\nquorum none\n`);
    const run = await w.build('2026-11-26T00:00:00Z');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).witnesses).toBeNull();
    expect((await liveCheckpoint()).split('\n').filter((l) => l.startsWith('\u2014'))).toHaveLength(1);
  });
});
