/**
 * A logged project with three real witnesses of its log (`mvr witness` in process, on loopback
 * ports), and the policy file naming them (two of three unless told), rewritten to point any of them at a
 * port nobody listens on: a witness that is down.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parsePolicy, verifyWitnessedCheckpoint } from '@merchant-verify/verifier';
import { parseCheckpoint, parseNote } from '#shared';
import { type LogKey, loadLogKey } from '../../keyring/log-key.ts';
import { buildArgs, runCli } from './cli.ts';
import { loggedProject } from './logged-project.ts';
import { freePort } from './ports.ts';
import { type Project, tempDir } from './project.ts';
import { policyText, startTestWitness, type TestWitness } from './witness.ts';

export interface WitnessedProject {
  p: Project;
  logKey: LogKey;
  witnesses: TestWitness[];
  policyFile: string;
  /** Writes the policy with the witnesses named in `down` ('a', 'b', 'c') unreachable; returns its text. */
  policyWith(down?: string[]): Promise<string>;
  /** `mvr build --json --witness-policy` dated `now`. */
  build(now: string): ReturnType<typeof runCli>;
  /** Sets every witness's clock. */
  setClock(ms: number): void;
  close(): Promise<void>;
}

/** `quorum` is the policy's quorum lines (default two of the three). */
export async function witnessedProject(quorum = 'group two-of-three 2 a b c\nquorum two-of-three'): Promise<WitnessedProject> {
  const p = await loggedProject();
  const log = { key: (await loadLogKey(p.keysDir, undefined))! };
  const witnesses = await Promise.all(['a', 'b', 'c'].map((n) => startTestWitness(n, [log])));
  const policyFile = join(await tempDir(), 'witnesses.policy');
  const deadUrl = `http://127.0.0.1:${await freePort()}`;
  const policyWith = async (down: string[] = []) => {
    const entries = witnesses.map((w, i) => ({ name: 'abc'[i]!, vkey: w.key.vkey, url: down.includes('abc'[i]!) ? deadUrl : w.url }));
    const text = policyText(log, entries, quorum);
    await writeFile(policyFile, text);
    return text;
  };
  await policyWith();
  return {
    p,
    logKey: log.key,
    witnesses,
    policyFile,
    policyWith,
    build: (now) => runCli(buildArgs(p, ['--json', '--witness-policy', policyFile], now)),
    setClock: (ms) => {
      for (const w of witnesses) w.now.ms = ms;
    },
    close: async () => {
      await Promise.all(witnesses.map((w) => w.close()));
    },
  };
}

export const checkpointSize = (note: string) => parseCheckpoint(parseNote(note).text).size;

/** The policy witnesses whose cosignatures of `note` count at `now` (sorted), or the verdict's code. */
export function cosignersOf(note: string, policy: string, now: number, maxAgeMs?: number): string[] | string {
  const result = verifyWitnessedCheckpoint(note, parsePolicy(policy), { now, ...(maxAgeMs ? { maxAgeMs } : {}) });
  return result.valid ? result.cosigners.map((c) => c.witness).sort() : result.code;
}

/** Each policy witness's cosignature time in `note`, ms, by witness name. */
export function cosignatureTimes(note: string, policy: string, now: number): Record<string, number> {
  const result = verifyWitnessedCheckpoint(note, parsePolicy(policy), { now });
  if (!result.valid) throw new Error(`not witnessed: ${result.code}`);
  return Object.fromEntries(result.cosigners.map((c) => [c.witness, c.time]));
}
