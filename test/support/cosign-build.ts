/**
 * Cosigns a real build's checkpoint with real witnesses. In production `mvr build
 * --witness-policy` (and `mvr publish`) submit the new checkpoint and append the cosignatures;
 * until then, tests do it here: real `mvr witness` servers on loopback ports (their clocks set by
 * the test), the real client `collectCosignatures`, and the cosignature lines appended to the live
 * build's checkpoint file and the public log's checkpoint, which the gateway then serves in its
 * proofs and at /log/checkpoint.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePolicy } from '@merchant-verify/verifier';
import { BUILD_CHECKPOINT_FILE, CURRENT_LINK, LOG_CHECKPOINT, LOG_DIR, LOG_VKEY_PATH } from '../../core/layout.ts';
import { parseVkey } from '../../keyring/log-key.ts';
import { collectCosignatures } from '../../witness/client.ts';
import { startWitness } from '../../witness/server.ts';
import { WitnessState } from '../../witness/state.ts';
import { generateWitnessKeyText, parseWitnessKey } from '../../witness/witness-key.ts';

export interface BuildWitness {
  name: string;
  vkey: string;
  url: string;
  /** The witness's clock, ms: what its cosignatures are dated. */
  now: { ms: number };
  close(): Promise<void>;
}

/** The log's verifier key as the build published it. */
export const logVkeyOf = (p: { publicDir: string }) => readFile(join(p.publicDir, LOG_VKEY_PATH), 'utf8');

/** Witnesses of the project's log, named `<name>.test/witness`, each with its own key, state and clock (`now`, ms). */
export async function startBuildWitnesses(p: { publicDir: string }, names: string[], now: number): Promise<BuildWitness[]> {
  const log = parseVkey(await logVkeyOf(p), LOG_VKEY_PATH);
  return Promise.all(
    names.map(async (name) => {
      const key = parseWitnessKey(generateWitnessKeyText(`${name}.test/witness`), name);
      const state = await new WitnessState(await mkdtemp(join(tmpdir(), 'witness-'))).open();
      const clock = { ms: now };
      const running = await startWitness({ key, logs: [log], state, clock: () => clock.ms }, { host: '127.0.0.1', port: 0 });
      return { name, vkey: key.vkey, url: running.url, now: clock, close: running.close };
    }),
  );
}

/** A tlog-policy of the project's log and these witnesses, with a quorum line such as `group q 2 a b c\nquorum q`. */
export async function buildPolicy(p: { publicDir: string }, witnesses: { name: string; vkey: string; url: string }[], quorum: string) {
  return [`log ${(await logVkeyOf(p)).trim()}`, ...witnesses.map((w) => `witness ${w.name} ${w.vkey} ${w.url}`), quorum, ''].join('\n');
}

/**
 * Submits the live build's checkpoint to the policy's witnesses (fresh ones: no consistency proof
 * is asked for) and appends the cosignatures to the build's checkpoint and the public log's.
 * Returns the cosigned checkpoint.
 */
export async function cosignBuild(p: { recordsDir: string; publicDir: string }, policyText: string): Promise<string> {
  const files = [join(p.recordsDir, CURRENT_LINK, BUILD_CHECKPOINT_FILE), join(p.publicDir, LOG_DIR, LOG_CHECKPOINT)];
  const note = await readFile(files[0]!, 'utf8');
  const collected = await collectCosignatures(
    parsePolicy(policyText),
    note,
    async () => {
      throw new Error('a fresh witness needs no consistency proof');
    },
    { timeoutMs: 10_000 },
  );
  if (!collected.quorum) throw new Error(`the witnesses did not cosign: ${JSON.stringify(collected.submissions)}`);
  for (const file of files) await writeFile(file, collected.checkpoint);
  return collected.checkpoint;
}
