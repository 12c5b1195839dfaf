import type { VerifierErrorCode } from '../errors.ts';
import { type Checkpoint, parseCheckpoint } from './checkpoint.ts';
import { type Sha256, treeHasher, verifyInclusion } from './merkle.ts';
import { type Ed25519VerifyRaw, type NoteError, type NoteVerifierKey, openNote, parseNote, parseVerifierKey } from './note.ts';
import type { PolicyLog } from './policy.ts';
import { parseTlogProof, type TlogProof } from './proof-text.ts';
import { statementEntry } from './statement-entry.ts';
import type { Witnessed } from './witnessed.ts';

/** Bytes of the salt carried in a proof's `extra` line. */
export const SALT_SIZE = 32;

/** Why a log proof did not verify. Stable codes, as for records. */
export type LogProofFailureCode = Extract<
  VerifierErrorCode,
  | 'MALFORMED_PROOF' // not a C2SP tlog-proof, or no 32-byte salt in its extra line
  | 'CHECKPOINT_NOT_SIGNED' // the checkpoint carries no valid signature by the log's key
  | 'LOG_ORIGIN_MISMATCH' // the checkpoint is of another log than the one expected
  | 'NOT_INCLUDED' // the record, salted, is not the entry at that index under the signed root
  | 'NOT_IN_LOG' // the gateway keeps no log proof of the record: there was none to check (not a proof that failed)
  | 'LOG_KEY_MISSING' // no log key was given, nor a witness policy with a log line (a policy implies the log check)
  | 'BAD_COSIGNATURE' // with a witness policy: a cosignature by one of its witnesses does not verify
  | 'NOT_WITNESSED' // with a witness policy: the checkpoint lacks the quorum of valid, timely cosignatures
  | 'BUILD_SUPERSEDED' // with a trusted checkpoint: the proof's checkpoint is smaller than it
  | 'LOG_INCONSISTENT' // with a trusted checkpoint: the proof's checkpoint has its size and another root
>;

export type LogProofResult =
  // With a witness policy (the main entry point's `verifyLogProof`), when the checkpoint was last witnessed.
  | ({ valid: true; index: number; checkpoint: Checkpoint } & Partial<Witnessed>)
  | { valid: false; code: LogProofFailureCode; message: string };

/** The log one trusts: its verifier key, and the origin its checkpoints must name (the key's name if not given). */
export interface LogTrust {
  vkey: string | NoteVerifierKey;
  origin?: string;
}

/** The log keys a checkpoint is checked with, and the origin it must name: the caller's key, or a policy's log lines for that origin. */
export interface LogKeys {
  keys: NoteVerifierKey[];
  origin: string;
}

/** The keys of a trusted log; a verifier key that cannot be read is the caller's mistake (InvalidVerifierKeyError), not a verdict on the proof. */
export function logKeysOf(sha256: Sha256, trust: LogTrust | LogKeys): LogKeys {
  if ('keys' in trust) return trust;
  const key = typeof trust.vkey === 'string' ? parseVerifierKey(sha256, trust.vkey) : trust.vkey;
  return { keys: [key], origin: trust.origin ?? key.name };
}

/**
 * Builds the log proof verifier around SHA-256 and Ed25519 primitives. The entry of a record
 * is `SHA-256(salt || record bytes)`, its leaf `SHA-256(0x00 || entry)`; the proof holds under
 * a checkpoint only if the log's key signed it, it names the expected origin, and the inclusion
 * proof leads from the leaf at the index to the checkpoint's root.
 */
export function createLogProofVerifier(sha256: Sha256, ed25519: Ed25519VerifyRaw) {
  const entryAt = createEntryCheck(sha256, ed25519);
  return function verifyLogProof(recordBytes: Uint8Array, proofText: string, trust: LogTrust | LogKeys): LogProofResult {
    return entryAt(proofText, trust, (proof) => {
      if (!proof.extra || proof.extra.length !== SALT_SIZE) return `the extra line must carry the record's ${SALT_SIZE}-byte salt`;
      const entry = new Uint8Array(SALT_SIZE + recordBytes.length);
      entry.set(proof.extra);
      entry.set(recordBytes, SALT_SIZE);
      return { entry: sha256(entry), what: 'the record with this salt' };
    });
  };
}

/**
 * Builds the verifier of a build statement's tlog-proof (the `statement_proof` of an absence
 * proof): a proof without an `extra` line whose entry is `statementEntry` of the statement file's
 * exact bytes, under a checkpoint signed by the log's key and naming its origin.
 */
export function createStatementProofVerifier(sha256: Sha256, ed25519: Ed25519VerifyRaw) {
  const entryAt = createEntryCheck(sha256, ed25519);
  return function verifyStatementProof(statementBytes: Uint8Array, proofText: string, trust: LogTrust | LogKeys): LogProofResult {
    return entryAt(proofText, trust, (proof) =>
      proof.extra
        ? 'a build statement proof has no extra line'
        : { entry: statementEntry(sha256, statementBytes), what: 'the build statement' },
    );
  };
}

/** Why no log key could be found to check a proof with. */
export type NoLogKey = { valid: false; code: Extract<VerifierErrorCode, 'LOG_KEY_MISSING' | 'LOG_ORIGIN_MISMATCH'>; message: string };

/** The verdict when neither the caller nor a policy names the log: a check that cannot run is not a pass. */
export const NO_LOG_KEY: NoLogKey = {
  valid: false,
  code: 'LOG_KEY_MISSING',
  message: "no log key: give the log's verifier key, or a witness policy with a log line for the proof's origin",
};

/**
 * The log keys a proof is checked with when the caller gave none but a witness policy: the policy's
 * log lines whose key name is the origin of the proof's checkpoint (c2sp.org/tlog-policy: a log's
 * key name is its origin). A policy implies the log check, so a policy without a log line is
 * LOG_KEY_MISSING, and one without a line for this origin LOG_ORIGIN_MISMATCH. A proof whose
 * checkpoint cannot be read gets all the policy's logs: the log check then refuses it with its own code.
 */
export function policyLogKeys(proofText: unknown, logs: PolicyLog[]): LogKeys | NoLogKey {
  if (logs.length === 0) return NO_LOG_KEY;
  const all = { keys: logs.map((l) => l.vkey), origin: logs[0]!.vkey.name };
  let origin: string;
  try {
    origin = parseCheckpoint(parseNote(parseTlogProof(proofText as string).checkpoint).text).origin;
  } catch {
    return all;
  }
  const keys = logs.filter((l) => l.vkey.name === origin).map((l) => l.vkey);
  if (keys.length === 0)
    return { valid: false, code: 'LOG_ORIGIN_MISMATCH', message: `the checkpoint is of "${origin}", a log the policy does not list` };
  return { keys, origin };
}

/** An entry's proof, read: the entry it must prove (and what it is, for messages), or why the proof cannot be one. */
type EntryOf = (proof: TlogProof) => { entry: Uint8Array; what: string } | string;

/** The checks every tlog-proof goes through, in order: its text, its entry, the log's signature, the origin, the inclusion. */
function createEntryCheck(sha256: Sha256, ed25519: Ed25519VerifyRaw) {
  const h = treeHasher(sha256);
  return function entryAt(proofText: string, trust: LogTrust | LogKeys, entryOf: EntryOf): LogProofResult {
    const { keys, origin } = logKeysOf(sha256, trust);
    let proof: TlogProof;
    try {
      proof = parseTlogProof(proofText);
    } catch (error) {
      return { valid: false, code: 'MALFORMED_PROOF', message: (error as Error).message };
    }
    const read = entryOf(proof);
    if (typeof read === 'string') return { valid: false, code: 'MALFORMED_PROOF', message: read };
    let checkpoint: Checkpoint;
    try {
      checkpoint = parseCheckpoint(openNote(proof.checkpoint, keys, ed25519));
    } catch (error) {
      return { valid: false, code: 'CHECKPOINT_NOT_SIGNED', message: `checkpoint: ${(error as NoteError).message}` };
    }
    if (checkpoint.origin !== origin)
      return { valid: false, code: 'LOG_ORIGIN_MISMATCH', message: `the checkpoint is of "${checkpoint.origin}", not "${origin}"` };
    if (!verifyInclusion(h, checkpoint, { index: proof.index, hash: h.leaf(read.entry) }, proof.proof)) {
      return {
        valid: false,
        code: 'NOT_INCLUDED',
        message: `${read.what} is not entry ${proof.index} of the log at size ${checkpoint.size}`,
      };
    }
    return { valid: true, index: proof.index, checkpoint };
  };
}
