/**
 * The witness step of a proof that holds: its checkpoint, a signed note that may carry cosignature
 * lines (c2sp.org/tlog-proof keeps the note whole), checked under a tlog-policy. `verifyLogProof`
 * and `verifyAbsence` run it when given a policy; `verifyAnswer` passes the policy to them.
 */

import type { WitnessSettings } from './options.ts';
import type { NoteVerifierKey } from './tlog/note.ts';
import type { TlogPolicy } from './tlog/policy.ts';
import type { Witnessed, WitnessedFailureCode } from './tlog/witnessed.ts';
import { verifyCheckedCheckpoint } from './witnesses.ts';

/** What a proof's checkpoint must hold under: without a policy, nothing is asked of its cosignatures. */
export interface WitnessOptions {
  /** A tlog-policy (`parsePolicy`): the proof's checkpoint must carry a quorum of its witnesses' cosignatures, and the proof must hold in its log. */
  policy?: TlogPolicy;
  /** With a policy: cosignatures older than this many ms (a finite, positive number) do not count (a replayed old proof is refused). */
  maxAgeMs?: number;
  /** The clock, epoch ms or a Date (default now): cosignatures dated more than a minute ahead of it do not count. */
  now?: number | Date;
  /**
   * A checkpoint note the caller saved out of band and trusts (as TUF keeps its last timestamp),
   * signed by the log's key: the proof's checkpoint must be of its origin and no smaller (the same
   * size, the same root). Implies the log check.
   */
  trustedCheckpoint?: string;
}

export type WitnessStep = ({ valid: true } & Witnessed) | { valid: false; code: WitnessedFailureCode; message: string };

/** The checkpoint note under the policy; a policy that lists no log applies to the log whose keys checked the proof (`logKeys`). */
export function witnessStep(
  checkpointNote: string,
  options: WitnessSettings & { policy: TlogPolicy },
  logKeys: NoteVerifierKey[],
): WitnessStep {
  const result = verifyCheckedCheckpoint(checkpointNote, options.policy, {
    now: options.now,
    ...(options.maxAgeMs === undefined ? {} : { maxAgeMs: options.maxAgeMs }),
    logs: logKeys,
  });
  return result.valid ? { valid: true, witnessedAt: result.witnessedAt, cosigners: result.cosigners } : result;
}
