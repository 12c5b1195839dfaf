/**
 * Witness test pieces: a log of SHA-256 entries signed by a real log key, its checkpoints and
 * consistency proofs; a real `mvr witness` server (in process, on a free loopback port) with a
 * fresh key and state folder and a clock the test sets; and the policy text naming them.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consistencyProof, formatCheckpoint } from '#shared';
import { generateLogKeyText, type LogKey, parseLogKey, signNote } from '../../keyring/log-key.ts';
import { type RunningWitness, startWitness } from '../../witness/server/http.ts';
import { WitnessState } from '../../witness/server/state.ts';
import { generateWitnessKeyText, parseWitnessKey, type WitnessKey } from '../../witness/server/witness-key.ts';
import { type CliResult, spawnCli } from './cli.ts';
import { h, referenceRoot, sha256 } from './tlog.ts';
import { waitFor } from './wait.ts';

export interface TestLog {
  key: LogKey;
  /** The signed checkpoint of the first `size` entries. */
  checkpoint(size: number): string;
  /** The consistency proof between two sizes. */
  proof(from: number, to: number): Promise<Uint8Array[]>;
}

/** A log of `origin`, its key named `keyName` (the origin unless told: C2SP says they only SHOULD match). */
export function testLog(origin = 'log.test/log', entries = 40, keyName = origin): TestLog {
  const key = parseLogKey(generateLogKeyText(keyName), keyName);
  const leaves = Array.from({ length: entries }, (_, i) => sha256(new TextEncoder().encode(`${origin} entry ${i}`)));
  const root = (size: number) => (size === 0 ? h.empty() : referenceRoot(leaves.slice(0, size)));
  return {
    key,
    checkpoint: (size) => signNote(key, formatCheckpoint({ origin, size, root: root(size) })),
    proof: (from, to) => consistencyProof(async (s, e) => referenceRoot(leaves.slice(s, e)), from, to),
  };
}

export interface TestWitness extends RunningWitness {
  key: WitnessKey;
  state: WitnessState;
  /** The witness's clock, ms; the test moves it. */
  now: { ms: number };
}

/** A witness of these logs, named `<name>.test/witness`, listening on 127.0.0.1. */
export async function startTestWitness(name: string, logs: Pick<TestLog, 'key'>[], stateDir?: string): Promise<TestWitness> {
  const key = parseWitnessKey(generateWitnessKeyText(`${name}.test/witness`), name);
  const state = await new WitnessState(stateDir ?? (await mkdtemp(join(tmpdir(), 'witness-')))).open();
  const now = { ms: Date.UTC(2026, 0, 1) };
  const running = await startWitness(
    { key, logs: logs.map((l) => ({ origin: l.key.verifierKey.name, key: l.key.verifierKey })), state, clock: () => now.ms },
    { host: '127.0.0.1', port: 0 },
  );
  return { ...running, key, state, now };
}

/** A policy naming the log and these witnesses (policy names as given, with their URLs), and a quorum line. */
export function policyText(log: Pick<TestLog, 'key'>, witnesses: { name: string; vkey: string; url: string }[], quorum: string): string {
  return [`log ${log.key.vkey}`, ...witnesses.map((w) => `witness ${w.name} ${w.vkey} ${w.url}`), quorum, ''].join('\n');
}

/** A real `mvr witness` process (`args` after `witness`), its URL once it says it listens, and its exit. */
export interface SpawnedWitness {
  url: string;
  /** Stops it (SIGTERM) and resolves with how it ended. */
  stop(): Promise<CliResult>;
}

/** Spawns `mvr witness ...args` and resolves once it prints the URL it listens on. */
export async function spawnWitnessCli(args: string[]): Promise<SpawnedWitness> {
  let url = '';
  let child: ChildProcess | undefined;
  const run = spawnCli(
    ['witness', ...args],
    {},
    {
      onSpawn: (c) => {
        child = c;
        let err = '';
        c.stderr!.on('data', (s: string) => {
          err += s;
          url = /listening on (\S+)/.exec(err)?.[1] ?? '';
        });
      },
    },
  );
  try {
    await waitFor(() => url !== '', 'mvr witness listening', 10_000);
  } catch (error) {
    child?.kill('SIGTERM');
    await run;
    throw error;
  }
  return {
    url,
    stop: () => {
      child?.kill('SIGTERM');
      return run;
    },
  };
}
