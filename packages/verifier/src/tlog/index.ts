/**
 * `@merchant-verify/verifier/internal/tlog`: internal, not a public API. The C2SP transparency-log
 * formats and Merkle tree operations (c2sp.org/signed-note, tlog-checkpoint, tlog-cosignature,
 * tlog-proof; RFC 6962 hashing) the verifier checks proofs with, for merchant-verify's own service
 * (its log writer, witness and monitor), so that what it writes and what is checked are one code.
 * Names here change with any release; a verifier needs only the main entry point.
 */
export { decodeBase64, encodeBase64 } from './base64.ts';
export { type Checkpoint, formatCheckpoint, parseCheckpoint } from './checkpoint.ts';
export { cosignatureKeyId, cosignatureLine, cosignedMessage, parseCosignature } from './cosignature.ts';
export {
  consistencyProof,
  equalBytes,
  foldPerfect,
  inclusionProof,
  type RangeHash,
  rangeHash,
  type Sha256,
  type TreeHasher,
  treeHasher,
  verifyConsistency,
  verifyInclusion,
} from './merkle.ts';
export {
  COSIGNATURE_ED25519,
  type Ed25519VerifyRaw,
  formatVerifierKey,
  isKeyName,
  NoteError,
  type NoteSignature,
  type NoteVerifierKey,
  noteKeyId,
  openNote,
  parseNote,
  parseVerifierKey,
  signatureLine,
} from './note.ts';
export { type PolicyLog, type PolicyWitness, type QuorumRule, quorumMet, type TlogPolicy } from './policy.ts';
export { formatTlogProof, parseTlogProof, TLOG_PROOF_HEADER, type TlogProof } from './proof-text.ts';
export { STATEMENT_ENTRY_PREFIX, statementEntry } from './statement-entry.ts';
