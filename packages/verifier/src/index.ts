/**
 * merchant-verify's portable verifier: runs unchanged in Node, browsers and edge runtimes.
 * No `node:` imports anywhere in this entry's graph; Ed25519 is @noble/ed25519 (RFC 8032 strict,
 * not ZIP-215, plus the exact equation: ./ed25519.ts), SHA-512 is @noble/hashes, canonical JSON is
 * RFC 8785.
 *
 * @example
 *   import { verifyRecord } from '@merchant-verify/verifier';
 *   const keySet = await (await fetch('https://verify.example/.well-known/merchant-verify-keys.json')).json();
 *   const result = verifyRecord(record, keySet);
 *   if (!result.valid) console.log('not verified:', result.code); // UNSIGNED is never a pass
 */

export type { AbsenceFailureCode, AbsenceProof, AbsenceResult, BuildStatement } from './absence.ts';
export { BUNDLE_SCHEMA_SUFFIX, type Bundle } from './bundle.ts';
export {
  type AbsenceOptions,
  type RecordVerification,
  type VerifyOptions,
  verifyAbsence,
  verifyLogProof,
  verifyRecord,
} from './checks.ts';
export { bucketBitsFor, bucketHex, bucketOf } from './compact.ts';
export {
  CanonicalizationError,
  FetchFailedError,
  InvalidArgumentError,
  InvalidKeySetError,
  InvalidVerifierKeyError,
  MvrError,
  NoteError,
  PolicyError,
  VERIFIER_ERROR_CODES,
  type VerifierErrorCode,
  type VerifierThrownCode,
} from './errors.ts';
export { type AnswerSource, type GatewaySourceOptions, gatewaySource, LOG_KEY_PATH } from './gateway-source.ts';
export type { KeySet, PublicJwk } from './keyset.ts';
export { KEY_SET_PATH, parseKeySet } from './keyset.ts';
export { type OnlineInput, type OnlineTrust, type OnlineVerification, verifyOnline } from './online.ts';
export { verifyOnlineCompact } from './online-compact.ts';
export { type PrivateOnlineInput, verifyOnlinePrivately } from './online-private.ts';
export type { Staleness } from './staleness.ts';
export { stalenessOf } from './staleness.ts';
export type { Checkpoint } from './tlog/checkpoint.ts';
export type { LogProofFailureCode, LogProofResult, LogTrust } from './tlog/log-proof.ts';
export type { NoteVerifierKey } from './tlog/note.ts';
export {
  type KeyEndorsement,
  type TrustedKeys,
  trustedKeySet,
  type UntrustedKey,
} from './trust.ts';
export { type AnswerAge, ageOf, type Verdict, verdictOf } from './verdict.ts';
export type { VerifyFailureCode, VerifyResult } from './verify.ts';
export { type AnswerVerification, isNeverAudited, type VerifyAnswerInput, verifyAnswer } from './verify-answer.ts';
export { type BundleVerification, type PlaceResult, type VerifyBundleInput, verifyBundle } from './verify-bundle.ts';
export {
  type CompactVerification,
  type EntryVerdict,
  recordMatchesEntry,
  type VerifyCompactInput,
  verifyCompactAnswer,
} from './verify-compact.ts';
export { type PrefixVerification, type VerifyPrefixInput, verifyPrefixAnswer } from './verify-prefix.ts';
export type { WitnessOptions } from './witness-step.ts';
export {
  type Cosigner,
  type PolicyLog,
  type PolicyWitness,
  parsePolicy,
  type QuorumRule,
  type TlogPolicy,
  verifyWitnessedCheckpoint,
  type Witnessed,
  type WitnessedFailureCode,
  type WitnessedOptions,
  type WitnessedResult,
} from './witnesses.ts';
