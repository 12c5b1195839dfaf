/**
 * The witness step of a proof that holds: its checkpoint, a signed note that may carry cosignature
 * lines (c2sp.org/tlog-proof keeps the note whole), checked under a tlog-policy. `verifyLogProof`
 * and `verifyAbsence` run it when given a policy; `verifyAnswer` passes the policy to them.
 */
import type { NoteVerifierKey } from './tlog/note.ts';
import type { TlogPolicy } from './tlog/policy.ts';
import type { Witnessed, WitnessedFailureCode } from './tlog/witnessed.ts';
import { verifyWitnessedCheckpoint } from './witnesses.ts';

/** What a proof's checkpoint must hold under: without a policy, nothing is asked of its cosignatures. */
export interface WitnessOptions {
  /** A tlog-policy (`parsePolicy`): the proof's checkpoint must carry a quorum of its witnesses' cosignatures. */
  policy?: TlogPolicy;
  /** With a policy: cosignatures older than this many ms do not count (a replayed old proof is refused). */
  maxAgeMs?: number;
  /** The clock, ms since 1970 (default now): cosignatures dated more than a minute ahead of it do not count. */
  now?: number;
}

export type WitnessStep = ({ valid: true } & Witnessed) | { valid: false; code: WitnessedFailureCode; message: string };

/** The checkpoint note under the policy; a policy that lists no log applies to the log whose key checked the proof (`logKey`). */
export function witnessStep(
  checkpointNote: string,
  options: WitnessOptions & { policy: TlogPolicy },
  logKey: NoteVerifierKey | null,
): WitnessStep {
  const result = verifyWitnessedCheckpoint(checkpointNote, options.policy, {
    now: options.now ?? Date.now(),
    ...(options.maxAgeMs === undefined ? {} : { maxAgeMs: options.maxAgeMs }),
    logs: logKey ? [logKey] : [],
  });
  return result.valid ? { valid: true, witnessedAt: result.witnessedAt, cosigners: result.cosigners } : result;
}
