/**
 * `@merchant-verify/verifier/internal/issuer`: internal, not a public API. The building blocks the
 * verifier checks with, for merchant-verify's own service that signs with them, so that what is
 * signed and what is checked are one code: RFC 8785 canonical JSON, base64url, the Ed25519
 * encoding rules, the signature step with a pluggable Ed25519 primitive, timestamps, the domain map
 * and build statement of absence proofs. Names here change with any release; a verifier needs only
 * the main entry point.
 */
export {
  type AbsenceProof,
  type BuildStatement,
  buildStatement,
  createAbsenceVerifier,
  STATEMENT_SCHEMA_SUFFIX,
  statementLeafSize,
  statementText,
} from './absence.ts';
export { decodeBase64url, encodeBase64url } from './base64url.ts';
export { BUNDLE_SCHEMA_SUFFIX, type Bundle } from './bundle.ts';
export { canonicalBytes, canonicalJson, canonicalMembers, hasLoneSurrogate, joinMembers } from './canonical.ts';
export { verifyBuildStatement } from './checks.ts';
export {
  bucketBitsFor,
  bucketHex,
  bucketOf,
  bucketOfHex,
  COMPACT_ANSWER_LIMIT,
  compactAnswerBytes,
  encodeCompactAnswer,
} from './compact.ts';
export { DomainMap, domainHash, type LeafSize } from './domain-map.ts';
export { nobleEd25519Verify } from './ed25519.ts';
export { ED25519_L, publicKeyProblem, signatureProblem } from './ed25519-encoding.ts';
export { findKey } from './keyset.ts';
export { decodeMapEntry, ENTRY_SIZE, encodeMapEntry, entryMismatch, HASH_LEAF_SIZE, type MapEntry } from './map-entry.ts';
export {
  PACK_RECORDS_MIN,
  PACKS_MAX,
  type PackFile,
  type PacksHead,
  packCount,
  packIndexBytes,
  packIndexProblem,
  packPath,
  packsHeadOf,
  type RecordPlace,
  recordPlace,
  recordsPerPackFor,
  splitPack,
} from './packs.ts';
export { hexPrefix, type LookupHead, lookupAnswerBytes, type PaddedPart, paddedPart, prefixLengthFor } from './prefix.ts';
export { addOneMonth, daysInMonth, formatTimestamp, parseTimestamp } from './time.ts';
export { createTrustedKeySet, KEY_ENDORSEMENT_TYPE, keySetEndorsements, TRUST_LIMITS } from './trust.ts';
export { createEd25519Check, createRecordVerifier, type Ed25519Verify, signatureText } from './verify.ts';
