/**
 * Newest means last: an answer is of the newest build when its build statement is the last entry
 * of the checkpoint its log proof is against. Every build appends its statement after its records,
 * and a build that logged its entries without going live appends the live build's statement again,
 * so the checkpoint a gateway serves with its live build always ends with that build's statement.
 * A checkpoint holding entries after the statement shows, by itself, that a later build was logged:
 * a store pointed back at an older build (its proofs made against the newer checkpoint, which still
 * holds the older statement) is refused here, with or without a witness policy.
 */
import { InvalidArgumentError } from './errors.ts';
import { encodeBase64 } from './tlog/base64.ts';
import { type Checkpoint, parseCheckpoint } from './tlog/checkpoint.ts';
import { equalBytes } from './tlog/merkle.ts';
import { type Ed25519VerifyRaw, type NoteVerifierKey, openNote } from './tlog/note.ts';

/** The refusal of an answer whose checkpoint shows entries logged after its build's statement. */
export interface Superseded {
  valid: false;
  code: 'BUILD_SUPERSEDED';
  message: string;
}

/**
 * Whether build `build`'s statement, at entry `index`, is the last entry of `checkpoint`: null when
 * it is (the answer is of the newest build as of that checkpoint), BUILD_SUPERSEDED otherwise,
 * saying how many entries the checkpoint holds after it. An answer about a named kept build
 * (`asOfBuild`, the build the caller asked for with `build=`) is about the past by design and
 * skips the rule, for that build only: naming one build never lets another's answer pass as current.
 */
export function supersededIn(index: number, checkpoint: Checkpoint, build: string, asOfBuild?: string): Superseded | null {
  const after = checkpoint.size - 1 - index;
  if (after === 0 || asOfBuild === build) return null;
  return {
    valid: false,
    code: 'BUILD_SUPERSEDED',
    message: `build ${build}'s statement is entry ${index} of a checkpoint of ${checkpoint.size} entries, which holds ${after} ${after === 1 ? 'entry' : 'entries'} logged after it: a later build was logged, so this answer is not the newest build's`,
  };
}

/** The refusal of an answer whose checkpoint is behind, or not of, the checkpoint the caller trusts. */
export interface BehindTrusted {
  valid: false;
  code: 'LOG_ORIGIN_MISMATCH' | 'BUILD_SUPERSEDED' | 'LOG_INCONSISTENT';
  message: string;
}

/**
 * A checkpoint the caller saved out of band (as TUF keeps its last timestamp), opened with the log's
 * keys: not signed by them, or not a checkpoint, is the caller's mistake (InvalidArgumentError).
 */
export function openTrustedCheckpoint(note: unknown, keys: NoteVerifierKey[], ed25519: Ed25519VerifyRaw): Checkpoint {
  const name = 'options.trustedCheckpoint';
  if (typeof note !== 'string') throw new InvalidArgumentError(name, "must be the text of a checkpoint note the log's key signed");
  try {
    return parseCheckpoint(openNote(note, keys, ed25519));
  } catch (error) {
    throw new InvalidArgumentError(name, `is not a checkpoint signed by the log's key: ${(error as Error).message}`);
  }
}

/**
 * Whether an answer's checkpoint is at least the one the caller trusts: of its origin, and no smaller
 * (the same size, the same root). Null when it is; then the answer's statement being its last entry
 * makes it current as of a checkpoint the caller trusts, whatever its cosignatures' age.
 */
export function behindTrusted(checkpoint: Checkpoint, trusted: Checkpoint): BehindTrusted | null {
  if (checkpoint.origin !== trusted.origin)
    return {
      valid: false,
      code: 'LOG_ORIGIN_MISMATCH',
      message: `the answer's checkpoint is of "${checkpoint.origin}", the trusted one of "${trusted.origin}"`,
    };
  if (checkpoint.size < trusted.size)
    return {
      valid: false,
      code: 'BUILD_SUPERSEDED',
      message: `the answer's checkpoint holds ${checkpoint.size} entries, fewer than the ${trusted.size} of the checkpoint you trust: the log has grown since, so a later build may be live`,
    };
  if (checkpoint.size === trusted.size && !equalBytes(checkpoint.root, trusted.root))
    return {
      valid: false,
      code: 'LOG_INCONSISTENT',
      message: `the answer's checkpoint and the one you trust both hold ${trusted.size} entries, under different roots (${encodeBase64(checkpoint.root)}, ${encodeBase64(trusted.root)}): two views of one log`,
    };
  return null;
}
