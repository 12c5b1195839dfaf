import type { VerifierErrorCode } from '../errors.ts';
import { type Checkpoint, parseCheckpoint } from './checkpoint.ts';
import { cosignedMessage, parseCosignature } from './cosignature.ts';
import { type Ed25519VerifyRaw, type NoteError, type NoteVerifierKey, openNote, parseNote } from './note.ts';
import { quorumMet, type TlogPolicy } from './policy.ts';

/** Why a checkpoint does not hold under a policy. */
export type WitnessedFailureCode = Extract<
  VerifierErrorCode,
  | 'CHECKPOINT_NOT_SIGNED' // not a signed note, or no valid signature by a log of the policy
  | 'LOG_ORIGIN_MISMATCH' // no log of the policy (or the log given) has the checkpoint's origin
  | 'BAD_COSIGNATURE' // a signature line by a policy witness's key that does not verify (the note is malformed)
  | 'NOT_WITNESSED' // the valid, timely cosignatures do not meet the quorum
>;

export interface Cosigner {
  /** The witness's name in the policy. */
  witness: string;
  /** When it cosigned, ms since 1970. */
  time: number;
}

/** When a checkpoint (and so a proof against it) was last witnessed, and by whom. */
export interface Witnessed {
  /** The witnesses whose valid cosignatures counted, each at its latest time. */
  cosigners: Cosigner[];
  /** When the checkpoint was last witnessed (the latest counted cosignature), ms; null when none counted (`quorum none`). */
  witnessedAt: number | null;
}

export type WitnessedResult =
  | ({ valid: true; checkpoint: Checkpoint } & Witnessed)
  | { valid: false; code: WitnessedFailureCode; message: string };

export interface WitnessedOptions {
  /** The clock, ms since 1970. Cosignatures more than a minute ahead of it do not count. */
  now: number;
  /** With it, cosignatures older than this many ms do not count. */
  maxAgeMs?: number;
  /**
   * Log keys known from elsewhere (the key a proof was checked with), for a policy that lists no
   * log: a policy's log lines, when it has any, are the logs it applies to.
   */
  logs?: NoteVerifierKey[];
}

/** How far ahead of the clock a cosignature's time may be. */
export const CLOCK_SKEW_MS = 60_000;

/**
 * Builds the checker of cosigned checkpoints around an Ed25519 primitive: the checkpoint must be
 * signed by a log of the policy whose key name is its origin; then the cosignatures by the
 * policy's witnesses that verify and are timely must meet the quorum. Signature lines of other
 * keys are ignored.
 */
export function createWitnessedVerifier(ed25519: Ed25519VerifyRaw) {
  return function verifyWitnessedCheckpoint(note: string, policy: TlogPolicy, options: WitnessedOptions): WitnessedResult {
    const fail = (code: WitnessedFailureCode, message: string): WitnessedResult => ({ valid: false, code, message });
    let text: string;
    let checkpoint: Checkpoint;
    try {
      const parsed = parseNote(note);
      text = parsed.text;
      checkpoint = parseCheckpoint(text);
    } catch (error) {
      return fail('CHECKPOINT_NOT_SIGNED', `checkpoint: ${(error as NoteError).message}`);
    }
    // The log's key name is its origin (c2sp.org/tlog-policy): only those keys may sign it.
    const known = policy.logs.length > 0 ? policy.logs.map((l) => l.vkey) : (options.logs ?? []);
    const logs = known.filter((k) => k.name === checkpoint.origin);
    if (logs.length === 0)
      return fail('LOG_ORIGIN_MISMATCH', `the checkpoint is of "${checkpoint.origin}", a log the policy does not list`);
    try {
      openNote(note, logs, ed25519);
    } catch (error) {
      return fail('CHECKPOINT_NOT_SIGNED', `checkpoint: ${(error as NoteError).message}`);
    }
    const latest = new Map<string, number>();
    const ignored: string[] = [];
    for (const s of parseNote(note).signatures) {
      const w = policy.witnesses.find((x) => x.vkey.name === s.name && x.vkey.id === s.id);
      if (!w) continue;
      const cosig = parseCosignature(s.signature);
      if (!cosig || !ed25519(cosig.signature, cosignedMessage(text, cosig.time), w.vkey.publicKey)) {
        return fail('BAD_COSIGNATURE', `the cosignature by witness ${w.name} (${s.name}) does not verify`);
      }
      const ms = Number(cosig.time) * 1000;
      if (cosig.time * 1000n > BigInt(Math.floor(options.now + CLOCK_SKEW_MS)))
        ignored.push(`${w.name}'s is dated ${cosig.time}, more than a minute ahead of now`);
      else if (options.maxAgeMs !== undefined && ms < options.now - options.maxAgeMs)
        ignored.push(`${w.name}'s is from ${new Date(ms).toISOString()}, older than the maximum age`);
      else latest.set(w.name, Math.max(ms, latest.get(w.name) ?? 0));
    }
    if (!quorumMet(policy.quorum, new Set(latest.keys()))) {
      const counted = latest.size === 0 ? 'no valid, timely cosignature' : `only ${[...latest.keys()].join(', ')} cosigned`;
      return fail(
        'NOT_WITNESSED',
        `the quorum ${policy.quorum?.name} is not met: ${counted}${ignored.length > 0 ? `; ${ignored.join('; ')}` : ''}`,
      );
    }
    const cosigners = [...latest].map(([witness, time]) => ({ witness, time }));
    return { valid: true, checkpoint, cosigners, witnessedAt: cosigners.length === 0 ? null : Math.max(...cosigners.map((c) => c.time)) };
  };
}
