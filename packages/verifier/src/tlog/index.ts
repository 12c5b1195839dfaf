/**
 * `@merchant-verify/verifier/tlog`: the C2SP transparency-log formats and Merkle tree operations
 * the verifier checks proofs with (c2sp.org/signed-note, tlog-checkpoint, tlog-cosignature,
 * tlog-proof; RFC 6962 hashing). For a log's writer, a witness or a monitor that must produce or
 * read the same bytes. A verifier of records needs only the main entry point (`verifyLogProof`).
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
