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

export type {
  AbsenceFailureCode,
  AbsenceProof,
  AbsenceResult,
  BuildStatement,
  Checkpoint,
  KeySet,
  LogProofFailureCode,
  LogProofResult,
  LogTrust,
  NoteVerifierKey,
  PublicJwk,
  Staleness,
  VerifyFailureCode,
  VerifyResult,
  WitnessOptions,
} from '#shared';
export {
  type AbsenceOptions,
  BUNDLE_SCHEMA_SUFFIX,
  type Bundle,
  bucketBitsFor,
  bucketHex,
  bucketOf,
  CanonicalizationError,
  type Cosigner,
  FetchFailedError,
  InvalidArgumentError,
  InvalidKeySetError,
  InvalidVerifierKeyError,
  KEY_SET_PATH,
  type KeyEndorsement,
  MvrError,
  NoteError,
  PolicyError,
  type PolicyLog,
  type PolicyWitness,
  parseKeySet,
  parsePolicy,
  type QuorumRule,
  type RecordVerification,
  stalenessOf,
  type TlogPolicy,
  type TrustedKeys,
  trustedKeySet,
  type UntrustedKey,
  VERIFIER_ERROR_CODES,
  type VerifierErrorCode,
  type VerifierThrownCode,
  type VerifyOptions,
  verifyAbsence,
  verifyLogProof,
  verifyRecord,
  verifyWitnessedCheckpoint,
  type Witnessed,
  type WitnessedFailureCode,
  type WitnessedOptions,
  type WitnessedResult,
} from '#shared';
export { type AnswerSource, type GatewaySourceOptions, gatewaySource, LOG_KEY_PATH } from './gateway-source.ts';
export { type OnlineInput, type OnlineTrust, type OnlineVerification, verifyOnline } from './online.ts';
export { type PrivateOnlineInput, verifyOnlineCompact } from './online-compact.ts';
export { type AnswerAge, ageOf, type Verdict, verdictOf } from './verdict.ts';
export { type AnswerVerification, isNeverAudited, type VerifyAnswerInput, verifyAnswer } from './verify-answer.ts';
export { type BundleVerification, type PlaceResult, type VerifyBundleInput, verifyBundle } from './verify-bundle.ts';
export {
  type CompactVerification,
  type EntryVerdict,
  recordMatchesEntry,
  type VerifyCompactInput,
  verifyCompactAnswer,
} from './verify-compact.ts';
