/**
 * `mvr build --witness-policy` with three real witnesses (`mvr witness` in process) and a quorum
 * of two: a build goes live with two of them, the next is cosigned after each checks its
 * consistency proof, a build short of the quorum does not go live but its checkpoint is never
 * rolled back, and the next build extends the log the witnesses saw.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parsePolicy, verifyWitnessedCheckpoint } from '@merchant-verify/verifier';
import { parseCheckpoint, parseNote } from '@merchant-verify/verifier/tlog';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLogKey } from '../../keyring/log-key.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { logDir, loggedProject } from '../support/logged-project.ts';
import { freePort } from '../support/ports.ts';
import { type Project, removeTempDirs, tempDir } from '../support/project.ts';
import { policyText, startTestWitness, type TestWitness } from '../support/witness.ts';

let p: Project;
let witnesses: TestWitness[];
let policyFile: string;
let log: { key: NonNullable<Awaited<ReturnType<typeof loadLogKey>>> };
let deadUrl: string;

beforeAll(async () => {
  p = await loggedProject();
  log = { key: (await loadLogKey(p.keysDir, undefined))! };
  witnesses = await Promise.all(['a', 'b', 'c'].map((n) => startTestWitness(n, [log])));
  policyFile = join(await tempDir(), 'witnesses.policy');
  deadUrl = `http://127.0.0.1:${await freePort()}`;
});
afterAll(async () => {
  await Promise.all(witnesses.map((w) => w.close()));
  await removeTempDirs();
});

/** Writes the policy (two of a, b, c) with the witnesses named in `down` pointing at a port nobody listens on. */
async function policyWith(down: string[]): Promise<string> {
  const entries = witnesses.map((w, i) => {
    const name = 'abc'[i]!;
    return { name, vkey: w.key.vkey, url: down.includes(name) ? deadUrl : w.url };
  });
  const text = policyText(log, entries, 'group two-of-three 2 a b c\nquorum two-of-three');
  await writeFile(policyFile, text);
  return text;
}

const buildWitnessed = (now: string) => runCli(buildArgs(p, ['--json', '--witness-policy', policyFile], now));
const liveCheckpoint = () => readFile(join(p.recordsDir, 'current', 'log-checkpoint'), 'utf8');
const headCheckpoint = () => readFile(join(logDir(p), 'checkpoint'), 'utf8');
const sizeOf = (note: string) => parseCheckpoint(parseNote(note).text).size;
const cosigners = (note: string, policy: string) => {
  const result = verifyWitnessedCheckpoint(note, parsePolicy(policy), { now: witnesses[0]!.now.ms });
  return result.valid ? result.cosigners.map((c) => c.witness).sort() : result.code;
};
const summaryOf = (stdout: string) =>
  JSON.parse(stdout) as { buildId: string; witnesses: { witness: string; ok: boolean; code?: string }[] };

describe.sequential('a build with a policy of three witnesses and a quorum of two', () => {
  it('goes live with two of them up, the cosigned checkpoint in the build and in public/log', async () => {
    const policy = await policyWith(['c']);
    const run = await buildWitnessed('2026-11-01T00:00:00Z');
    expect(run.code, run.stderr).toBe(0);
    expect(summaryOf(run.stdout).witnesses).toMatchObject([
      { witness: 'a', ok: true },
      { witness: 'b', ok: true },
      { witness: 'c', ok: false, code: 'WITNESS_UNAVAILABLE' },
    ]);
    expect(run.stderr).toMatch(/"phase":"witness","witness":"c","code":"WITNESS_UNAVAILABLE","message":"witness c could not be reached/);
    const live = await liveCheckpoint();
    expect(await headCheckpoint()).toBe(live);
    expect(cosigners(live, policy)).toEqual(['a', 'b']);
  });

  it('cosigns the next build after each witness checked its consistency proof from the size it cosigned', async () => {
    const policy = await policyWith(['c']);
    const before = sizeOf(await liveCheckpoint());
    const run = await buildWitnessed('2026-11-10T00:00:00Z');
    expect(run.code, run.stderr).toBe(0);
    const live = await liveCheckpoint();
    expect(sizeOf(live)).toBeGreaterThan(before);
    expect(cosigners(live, policy)).toEqual(['a', 'b']);
  });

  it('does not go live with one witness, keeps the checkpoint it sent, and the next build extends it', async () => {
    const liveBefore = await liveCheckpoint();
    const current = await readFile(join(p.recordsDir, 'current', 'manifest.json'), 'utf8');
    await policyWith(['b', 'c']);
    const short = await buildWitnessed('2026-11-20T00:00:00Z');
    expect(short.code, short.stderr).toBe(19);
    expect(JSON.parse(short.stdout)).toMatchObject({ ok: false, code: 'WITNESS_QUORUM_NOT_MET' });
    expect(JSON.parse(short.stdout).message).toMatch(/witness b could not be reached.*witness c could not be reached/);
    // The previous build stays live; the log's checkpoint is the one witness a saw, its tiles kept.
    expect(await liveCheckpoint()).toBe(liveBefore);
    expect(await readFile(join(p.recordsDir, 'current', 'manifest.json'), 'utf8')).toBe(current);
    const sent = await headCheckpoint();
    expect(sizeOf(sent)).toBeGreaterThan(sizeOf(liveBefore));
    expect(await stat(join(logDir(p), 'tile'))).toBeTruthy();

    // The witnesses back: a (which saw the unlived checkpoint), b and c all accept the next build.
    const policy = await policyWith([]);
    const next = await buildWitnessed('2026-11-25T00:00:00Z');
    expect(next.code, next.stderr).toBe(0);
    expect(summaryOf(next.stdout).witnesses.map((w) => w.ok)).toEqual([true, true, true]);
    const live = await liveCheckpoint();
    expect(sizeOf(live)).toBeGreaterThan(sizeOf(sent));
    expect(cosigners(live, policy)).toEqual(['a', 'b', 'c']);
  });
});
