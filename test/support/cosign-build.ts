/**
 * A real build's checkpoint cosigned by real witnesses: `mvr witness` servers on loopback ports
 * (their clocks set by the test) and the log's own refresh (`witnessLiveFolder`, what `mvr log
 * witness` runs), which writes the cosignatures into the live build's checkpoint and the public
 * log's; the gateway then serves them in its proofs and at /log/checkpoint.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePolicy } from '@merchant-verify/verifier';
import { BUILD_CHECKPOINT_FILE, CURRENT_LINK, LOG_VKEY_PATH } from '../../core/layout.ts';
import { parseVkey } from '../../keyring/log-key.ts';
import { witnessLiveFolder } from '../../witness/build-phase/refresh.ts';
import { startWitness } from '../../witness/server/http.ts';
import { WitnessState } from '../../witness/server/state.ts';
import { generateWitnessKeyText, parseWitnessKey } from '../../witness/server/witness-key.ts';

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
      const running = await startWitness(
        { key, logs: [{ origin: log.name, key: log }], state, clock: () => clock.ms },
        { host: '127.0.0.1', port: 0 },
      );
      return { name, vkey: key.vkey, url: running.url, now: clock, close: running.close };
    }),
  );
}

/** A tlog-policy of the project's log and these witnesses, with a quorum line such as `group q 2 a b c\nquorum q`. */
export async function buildPolicy(p: { publicDir: string }, witnesses: { name: string; vkey: string; url: string }[], quorum: string) {
  return [`log ${(await logVkeyOf(p)).trim()}`, ...witnesses.map((w) => `witness ${w.name} ${w.vkey} ${w.url}`), quorum, ''].join('\n');
}

/**
 * Has the live build's checkpoint cosigned by the policy's witnesses with the log's own refresh
 * (`mvr log witness`: the build's checkpoint and the public log's rewritten with the cosignatures),
 * failing short of the quorum. Returns the cosigned checkpoint.
 */
export async function cosignBuild(p: { recordsDir: string; publicDir: string }, policyText: string): Promise<string> {
  await witnessLiveFolder({ policy: parsePolicy(policyText), file: 'the test policy', flag: '--policy', timeoutMs: 10_000 }, p);
  return readFile(join(p.recordsDir, CURRENT_LINK, BUILD_CHECKPOINT_FILE), 'utf8');
}
