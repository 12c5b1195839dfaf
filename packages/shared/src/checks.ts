/**
 * The three checks of the verifier, bound to the portable primitives (@noble/ed25519 strict,
 * @noble/hashes SHA-256): a record's signature, a log proof, an absence proof. `verifyAnswer`
 * (verify-answer.ts) runs them in order; the main entry point exports them one by one as well.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { type AbsenceResult, createAbsenceVerifier, createStatementLogCheck, STATEMENT_SCHEMA_SUFFIX, statementHead } from './absence.ts';
import { canonicalBytes } from './canonical.ts';
import { behindTrusted, openTrustedCheckpoint } from './current.ts';
import { nobleEd25519Verify } from './ed25519.ts';
import { type KeySet, parseKeySet } from './keyset.ts';
import { asOfBuildOf, clockOf, logTrustOf, optionsOf, shown, stringOf, type WitnessSettings, witnessSettingsOf } from './options.ts';
import { type Staleness, stalenessOf } from './staleness.ts';
import {
  createLogProofVerifier,
  type LogKeys,
  type LogProofResult,
  type LogTrust,
  logKeysOf,
  NO_LOG_KEY,
  type NoLogKey,
  policyLogKeys,
} from './tlog/log-proof.ts';
import type { NoteVerifierKey } from './tlog/note.ts';
import type { TlogPolicy } from './tlog/policy.ts';
import { parseTlogProof } from './tlog/proof-text.ts';
import { createNoteEd25519, createRecordVerifier, type VerifyResult } from './verify.ts';
import { type WitnessOptions, type WitnessStep, witnessStep } from './witness-step.ts';

const verifySignature = createRecordVerifier(nobleEd25519Verify);

export interface VerifyOptions {
  /** Clock for staleness: epoch ms or a Date (default now). */
  now?: number | Date;
  /** The normalized domain that was asked for; a record of any other domain fails with DOMAIN_MISMATCH. */
  domain?: string;
}

export type RecordVerification = VerifyResult & {
  /** The record's `status`, when it has one. Meaningful only when `valid` is true. */
  status: string | null;
  staleness: Staleness;
};

/**
 * Verifies a record's Ed25519 signature against a key set and reports how stale it is.
 *
 * `valid` is true only for a signature that verifies over the RFC 8785 bytes of the record less
 * `key_id` and `signature`, by the key its `key_id` names. A missing signature is `UNSIGNED`:
 * unverified, never a pass. The key set is checked first (a set holding private keys is refused).
 * With `options.domain`, the record must also be that domain's.
 */
export function verifyRecord(record: unknown, keySet: unknown, options: VerifyOptions = {}): RecordVerification {
  const o = optionsOf<VerifyOptions>(options);
  const now = clockOf(o.now);
  const domain = o.domain === undefined ? undefined : stringOf(o.domain, 'options.domain');
  const keys: KeySet = parseKeySet(keySet);
  let result = verifySignature(record, keys);
  const obj = typeof record === 'object' && record !== null ? (record as Record<string, unknown>) : {};
  // A valid signature on another domain's record is still the wrong answer to the question asked.
  if (result.valid && domain !== undefined && obj.domain !== domain) {
    result = {
      valid: false,
      code: 'DOMAIN_MISMATCH',
      message: `the record is for ${shown(obj.domain, false)}, not ${domain}`,
      keyId: result.keyId,
    };
  }
  return { ...result, status: typeof obj.status === 'string' ? obj.status : null, staleness: stalenessOf(obj, now) };
}

// Checkpoint signatures get the record scheme's Ed25519 step too: the same encoding rules, the same primitive.
const noteEd25519 = createNoteEd25519(nobleEd25519Verify);
const verifyProofBytes = createLogProofVerifier(sha256, noteEd25519);

/**
 * Verifies a C2SP tlog-proof (`GET /v1/proof?domain=`) for a record: that the record, with the
 * salt the proof carries, is the entry at the proof's index of the issuer's public log, under a
 * checkpoint signed by the log's key (`trust.vkey`, the note verifier key the issuer publishes at
 * `/.well-known/merchant-verify-log.vkey`) and naming the log's origin. A valid proof says the
 * issuer published this record to everyone, not only to you; it says nothing more about the record
 * than its signature does, so check that with {@link verifyRecord} as well.
 *
 * With `options.policy` (a tlog-policy, `parsePolicy`), the proof's checkpoint must also carry a
 * quorum of valid cosignatures by the policy's witnesses, none dated more than a minute ahead of
 * `options.now` and, with `options.maxAgeMs`, none older: the result then says when it was last
 * witnessed (`witnessedAt`, `cosigners`), or fails with NOT_WITNESSED or BAD_COSIGNATURE. A policy
 * implies the log check: without `trust`, the log key is the policy's log line for the checkpoint's
 * origin; with neither, the verdict is LOG_KEY_MISSING, never a pass. Options that are not what they
 * say (a `maxAgeMs` that is not a finite, positive number of ms, a `now` that is not a time) throw
 * InvalidArgumentError; a `vkey` that cannot be read throws InvalidVerifierKeyError.
 *
 * @example
 *   const proof = verifyLogProof(record, proofText, { vkey: 'verify.example/log+1a2b3c4d+AT...' });
 *   if (!proof.valid) console.log('not in the log:', proof.code);
 *   const fresh = verifyLogProof(record, proofText, { vkey }, { policy, maxAgeMs: 36 * 3600_000 });
 *   if (fresh.valid) console.log('last witnessed', new Date(fresh.witnessedAt ?? 0));
 */
export function verifyLogProof(record: unknown, proofText: string, trust?: LogTrust, options: WitnessOptions = {}): LogProofResult {
  const text = stringOf(proofText, 'proofText');
  const settings = witnessSettingsOf(optionsOf<WitnessOptions>(options));
  const keys = logKeysFor(text, trust, 'trust', settings);
  if ('code' in keys) return keys;
  const result = verifyProofBytes(canonicalBytes(record), text, keys);
  if (!result.valid) return result;
  if (settings.trustedCheckpoint !== undefined) {
    const behind = behindTrusted(result.checkpoint, openTrustedCheckpoint(settings.trustedCheckpoint, keys.keys, noteEd25519));
    if (behind) return behind;
  }
  if (!settings.policy) return result;
  const witnessed = witnessStep(parseTlogProof(text).checkpoint, { ...settings, policy: settings.policy }, keys.keys);
  return witnessed.valid ? { ...result, witnessedAt: witnessed.witnessedAt, cosigners: witnessed.cosigners } : witnessed;
}

/**
 * The keys a proof's log check uses. A policy implies the log check: the key is the caller's,
 * else the policy's log line for the proof's origin; with neither, LOG_KEY_MISSING, never a pass.
 */
function logKeysFor(proofText: unknown, trust: unknown, name: string, settings: WitnessSettings): LogKeys | NoLogKey {
  if (trust !== undefined && trust !== null) return logKeysOf(sha256, logTrustOf(trust, name));
  return settings.policy ? policyLogKeys(proofText, settings.policy.logs) : NO_LOG_KEY;
}

// The statement is signed by the record scheme: the same Ed25519 step as records.
const verifyAbsenceProof = createAbsenceVerifier(sha256, nobleEd25519Verify);

/**
 * Verifies an absence proof (`GET /v1/absence?domain=`): that `domain` (normalized, as the
 * gateway answers it) has no record in the build the proof's statement names. `valid` is true
 * only when the build statement is signed by a key of the set (by the record scheme) and the two
 * neighbouring leaves of its domain map enclose SHA-256 of the domain, are adjacent, and are proven
 * in the signed map. An `unverified` answer is never audited only where such a proof holds; how
 * old a build may be is the caller's policy, from `issuedAt`.
 *
 * With `options.log` (the log's verifier key, as for {@link verifyLogProof}), the proof's
 * `statement_proof` must also prove the build statement's entry in that log, under a checkpoint
 * its key signed: the build was shown to everyone, not made for you. Missing, malformed, of another
 * log or not including the statement, it fails with STATEMENT_NOT_LOGGED; when it holds, the
 * result's `statementLog` gives the entry's index and the checkpoint.
 *
 * With `options.policy`, the checkpoint of the proof's `statement_proof` (the build statement's
 * entry in the log) must hold under it as for {@link verifyLogProof}: the result then says when
 * the build was last witnessed as the latest. A policy implies the log check: without `options.log`,
 * the statement proof is checked with the policy's log line for its checkpoint's origin, and with
 * neither the verdict is LOG_KEY_MISSING. Without a policy and without `log`, the map alone is checked.
 *
 * @example
 *   const proof = await (await fetch(`${base}/v1/absence?domain=shop.example`, { headers })).json();
 *   const absence = verifyAbsence(proof, 'shop.example', keySet, { log: { vkey } });
 *   if (absence.valid) console.log(`never audited in build ${absence.build}`);
 */
export function verifyAbsence(proof: unknown, domain: string, keySet: unknown, options: AbsenceOptions = {}): AbsenceResult {
  const o = optionsOf<AbsenceOptions>(options);
  const settings = witnessSettingsOf(o);
  const asked = stringOf(domain, 'domain');
  const keys = parseKeySet(keySet);
  const statementProof = (proof as { statement_proof?: unknown } | null)?.statement_proof;
  const log = logKeysFor(statementProof, o.log, 'options.log', settings);
  // The map is checked first: a proof that is not one says so before what its log step lacks.
  const result = verifyAbsenceProof(proof, asked, keys, 'code' in log ? undefined : log, {
    asOfBuild: asOfBuildOf(o.asOfBuild),
    trustedCheckpoint: settings.trustedCheckpoint,
  });
  return result.valid ? statementLogSteps(statementProof, result, log, o, settings) : result;
}

const statementLogged = createStatementLogCheck(sha256, nobleEd25519Verify);

/**
 * Verifies a build statement as an absence proof's is verified, without a map step: signed by the
 * record scheme by a key of the set, and with `options.log` or `options.policy` proven in the log by
 * its `statementProof` (and witnessed under the policy). Prefix answers carry their statement so.
 */
export function verifyBuildStatement(
  statement: unknown,
  statementProof: unknown,
  keySet: unknown,
  options: AbsenceOptions = {},
): AbsenceResult {
  const o = optionsOf<AbsenceOptions>(options);
  const settings = witnessSettingsOf(o);
  const keys = parseKeySet(keySet);
  const head = statementHead(statement);
  if (!head)
    return {
      valid: false,
      code: 'MALFORMED_ABSENCE_PROOF',
      message: `statement: not a build statement (schema ending in ${STATEMENT_SCHEMA_SUFFIX} or /schemas/build/v1, build, issued_at, domain_map {size, root})`,
    };
  const signed = verifySignature(statement, keys);
  if (!signed.valid)
    return {
      valid: false,
      code: 'STATEMENT_NOT_SIGNED',
      message: `the build statement does not verify: ${signed.code} (${signed.message})`,
    };
  const proven = { valid: true as const, build: head.build, issuedAt: head.issuedAt, keyId: signed.keyId, size: head.size };
  const log = logKeysFor(statementProof, o.log, 'options.log', settings);
  const logged =
    'code' in log
      ? proven
      : statementLogged({ statement, statement_proof: statementProof }, proven, log, {
          asOfBuild: asOfBuildOf(o.asOfBuild),
          trustedCheckpoint: settings.trustedCheckpoint,
        });
  return logged.valid ? statementLogSteps(statementProof, logged, log, o, settings) : logged;
}

/** After the statement's own checks: the log key that was missing, and the witness step under a policy. */
function statementLogSteps(
  statementProof: unknown,
  result: AbsenceResult & { valid: true },
  log: LogKeys | NoLogKey,
  o: AbsenceOptions,
  settings: WitnessSettings,
): AbsenceResult {
  if ('code' in log) {
    // Without any log key, a policy or a trusted checkpoint, the caller asked for the map alone.
    if (o.log === undefined && !settings.policy && settings.trustedCheckpoint === undefined) return result;
    return log.code === 'LOG_KEY_MISSING'
      ? log
      : { valid: false, code: 'STATEMENT_NOT_LOGGED', message: `statement_proof: ${log.code} (${log.message})` };
  }
  if (!settings.policy) return result;
  const witnessed = statementWitnessed(statementProof, { ...settings, policy: settings.policy }, log.keys);
  return witnessed.valid ? { ...result, witnessedAt: witnessed.witnessedAt, cosigners: witnessed.cosigners } : witnessed;
}

/**
 * What an absence proof is checked under, besides the key set: the log's verifier key (and origin),
 * in which the build statement must be proven, and a witness policy for that proof's checkpoint.
 * `asOfBuild` names the kept build the answer was asked about (`build=`, history): that build's
 * statement need not be the last entry of its checkpoint (BUILD_SUPERSEDED is for answers about the
 * live build, and for any other build's).
 */
export type AbsenceOptions = WitnessOptions & { log?: LogTrust; asOfBuild?: string };

/**
 * The witness step of an absence proof: the checkpoint of its `statement_proof` under the policy.
 * That the statement proof holds (the statement's entry is in that checkpoint's tree) is its own
 * check, made before this one; this step reads only its checkpoint.
 */
function statementWitnessed(text: unknown, options: WitnessSettings & { policy: TlogPolicy }, logKeys: NoteVerifierKey[]): WitnessStep {
  // The statement's log step held, so its proof is a tlog-proof.
  return witnessStep(parseTlogProof(text as string).checkpoint, options, logKeys);
}
