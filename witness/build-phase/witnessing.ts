import { equalBytes, formatVerifierKey, type NoteVerifierKey, parseCheckpoint, parseNote, quorumMet, type TlogPolicy } from '#shared';
import { hasher } from '../../core/crypto/hash.ts';
import { ConfigError, WitnessQuorumNotMetError } from '../../core/errors/errors.ts';
import { READ_LIMITS } from '../../core/limits.ts';
import { type TileFetch, TileTree } from '../../core/tlog/tile-tree.ts';
import { type Cosigned, collectCosignatures, endpointUrlProblem } from '../client/submit.ts';
import { readPolicyFile } from '../policy-file.ts';

export type { Cosigned, WitnessReport } from '../client/submit.ts';

/**
 * The log's side of witnessing (c2sp.org/tlog-witness): a checkpoint goes to every witness of the
 * deployment's policy with the consistency proof from the size each last cosigned, computed from
 * the log's tiles, and the cosignatures come back as signature lines of the checkpoint.
 */

/** How long one witness may take to answer, ms (the limits table, core/limits.ts). */
export const WITNESS_TIMEOUT_MS = READ_LIMITS.witnessAnswer.deadlineMs;

/** A policy that asks for cosignatures (`quorum none` is no witnessing at all), and where it came from. */
export interface Witnessing {
  policy: TlogPolicy;
  file: string;
  /** The flag (or variable) the file was given by, as the user typed it: messages name it. */
  flag: string;
  timeoutMs: number;
}

/**
 * The policy of `--witness-policy FILE` (or of the flag `flag` names, e.g. `mvr log witness --policy`);
 * null without a file or with `quorum none` (nothing is sent, nothing changes). With `log`, the
 * policy must name that log's key.
 */
export async function readWitnessPolicy(
  file: string | undefined,
  log?: NoteVerifierKey,
  flag = '--witness-policy',
): Promise<Witnessing | null> {
  if (!file) return null;
  const { policy } = await readPolicyFile(file, flag);
  if (policy.quorum === null) return null;
  for (const w of policy.witnesses) {
    const problem = w.url && endpointUrlProblem(w.url);
    if (problem) throw new ConfigError(`${flag} ${file}: witness ${w.name} ${problem}`);
  }
  if (log && !policy.logs.some((l) => sameKey(l.vkey, log)))
    throw new ConfigError(`${flag} ${file} has no "log" line with this log's key (${formatVerifierKey(log)})`);
  return { policy, file, flag, timeoutMs: WITNESS_TIMEOUT_MS };
}

/**
 * Sends a checkpoint to every witness of the policy, each with the consistency proof from the
 * size it last cosigned (from the tiles `tiles` reads). A witness that refuses or cannot be
 * reached is reported by name and keeps its earlier cosignature of this checkpoint, if any.
 */
export async function witnessCheckpoint(w: Witnessing, note: string, tiles: TileFetch): Promise<Cosigned> {
  const { base, earlier } = splitCosignatures(note, w.policy);
  const { origin, size } = parseCheckpoint(parseNote(base).text);
  if (!w.policy.logs.some((l) => l.vkey.name === origin))
    throw new ConfigError(`${w.flag} ${w.file} has no "log" line for ${origin}, the log of this checkpoint`);
  const tree = new TileTree(hasher, size, tiles);
  const collected = await collectCosignatures(w.policy, base, (old) => tree.consistency(old), { timeoutMs: w.timeoutMs });
  const kept = collected.witnesses.flatMap((r) => (!r.ok && earlier.has(r.witness) ? [r.witness] : []));
  const signed = new Set([...collected.witnesses.filter((r) => r.ok).map((r) => r.witness), ...kept]);
  return {
    ...collected,
    checkpoint: collected.checkpoint + kept.map((name) => earlier.get(name)).join(''),
    quorum: quorumMet(w.policy.quorum, signed),
  };
}

/** WITNESS_QUORUM_NOT_MET naming every witness that did not cosign and why, unless the quorum is met. */
export function requireQuorum(w: Witnessing, witnessed: Cosigned, what: string): void {
  if (witnessed.quorum) return;
  const failed = witnessed.witnesses.filter((r) => !r.ok).map((r) => r.message ?? r.witness);
  throw new WitnessQuorumNotMetError(
    `${what}: the checkpoint did not reach the quorum of ${w.file} (${failed.join('; ')}), so it does not go live`,
  );
}

/** The note without the cosignature lines of policy witnesses (`base`), and those lines by witness name. */
function splitCosignatures(note: string, policy: TlogPolicy): { base: string; earlier: Map<string, string> } {
  const { text, signatures } = parseNote(note);
  const lines = note.slice(text.length + 1, -1).split('\n');
  const earlier = new Map<string, string>();
  let base = `${text}\n`;
  for (const [i, s] of signatures.entries()) {
    const witness = policy.witnesses.find((w) => w.vkey.name === s.name && w.vkey.id === s.id);
    if (witness) earlier.set(witness.name, `${lines[i]}\n`);
    else base += `${lines[i]}\n`;
  }
  return { base, earlier };
}

const sameKey = (a: NoteVerifierKey, b: NoteVerifierKey) => a.name === b.name && a.id === b.id && equalBytes(a.publicKey, b.publicKey);
