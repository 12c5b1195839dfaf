/**
 * `@merchant-verify/shared`: private, never published. What merchant-verify's issuer (the service
 * that builds, signs, logs and serves) and its verifier (the published @merchant-verify/verifier)
 * share, so that what is written and what is checked are one code: RFC 8785 canonical JSON,
 * base64 and base64url, the Ed25519 encoding rules and check, the record, statement and absence
 * checks, domain maps, packs and prefixes, timestamps, and the C2SP transparency-log formats with
 * RFC 6962 Merkle hashing (signed notes, checkpoints, cosignatures, proofs, policies).
 *
 * The service imports it as `#shared` (its package.json `imports`); the verifier does too, and
 * bundles what it runs of it into its own dist/index.js. Nothing outside this folder imports its
 * files one by one: this entry is its only door.
 */
export * from './absence.ts';
export * from './base64url.ts';
export * from './bounded-read.ts';
export * from './bundle.ts';
export * from './canonical.ts';
export * from './checks.ts';
export * from './compact.ts';
export * from './current.ts';
export * from './domain-map.ts';
export * from './ed25519.ts';
export * from './ed25519-encoding.ts';
export * from './errors.ts';
export * from './keyset.ts';
export * from './limits.ts';
export * from './map-entry.ts';
export * from './options.ts';
export * from './packs.ts';
export * from './prefix.ts';
export * from './staleness.ts';
export * from './time.ts';
export * from './tlog/base64.ts';
export * from './tlog/checkpoint.ts';
export * from './tlog/cosignature.ts';
export * from './tlog/log-proof.ts';
export * from './tlog/merkle.ts';
export * from './tlog/note.ts';
// The policy parser bound to SHA-256 is witnesses.ts's parsePolicy; the hasher-generic one stays inside.
export { type PolicyLog, type PolicyWitness, type QuorumRule, quorumMet, type TlogPolicy } from './tlog/policy.ts';
export * from './tlog/proof-text.ts';
export * from './tlog/statement-entry.ts';
export * from './tlog/witnessed.ts';
export * from './trust.ts';
export * from './verify.ts';
export * from './witness-step.ts';
export * from './witnesses.ts';
