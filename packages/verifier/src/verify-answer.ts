/**
 * One verification of a lookup's answer, as a short ordered pipeline: the absence proof of a
 * never-audited answer, or the record's signature; then the record's log proof; with a witness
 * policy, the cosignatures of the deciding proof's checkpoint. Every caller (the
 * CLI, the verify page, an MCP client) fetches what it needs and calls this; none of them
 * re-decides the order or the verdict.
 */
import type { AbsenceOptions, AbsenceResult, LogProofResult, Staleness, TlogPolicy, Witnessed, WitnessOptions } from '#shared';
import {
  asOfBuildOf,
  InvalidArgumentError,
  logTrustOf,
  type RecordVerification,
  shown,
  stringOf,
  type VerifierErrorCode,
  verifyAbsence,
  verifyLogProof,
  verifyRecord,
  witnessSettingsOf,
} from '#shared';

export interface VerifyAnswerInput {
  /**
   * The answer to `GET /v1/verify` (a signed record, or the never-audited answer). Omitted when
   * only an absence proof is at hand: the answer is then the never-audited one for `domain`.
   */
  answer?: unknown;
  /** The key set the record (and the absence proof's build statement) is checked against. */
  keySet: unknown;
  /** The normalized domain asked; defaults to the answer's. A record of another domain fails with DOMAIN_MISMATCH. */
  domain?: string;
  /**
   * For a never-audited answer: its absence proof (`GET /v1/absence`), or why there is none (said
   * in the NOT_ABSENT verdict). Without it, a never-audited answer is judged by its signature
   * alone, which it has not: UNSIGNED.
   */
  absence?: { proof: unknown } | { unavailable: string };
  /**
   * The log's note verifier key, and the record's C2SP tlog-proof (`GET /v1/proof`). With the key,
   * a record must come with its proof (MALFORMED_PROOF without), and a never-audited answer's
   * absence proof must prove its build statement in the log (its `statement_proof`).
   */
  log?: { proof?: string; vkey: string };
  /**
   * A tlog-policy (`parsePolicy`): the checkpoint of the proof that decides (the record's log
   * proof, or the absence proof's statement proof) must be cosigned by its quorum, and the proof
   * must hold in the log: a policy implies the log check. A record then needs `log`: without it,
   * the verdict is NOT_WITNESSED. An absence proof's statement proof is checked with `log.vkey`,
   * else with the policy's log line for its origin (LOG_KEY_MISSING when there is neither).
   */
  policy?: TlogPolicy;
  /** With `policy`: cosignatures older than this many ms (a finite, positive number) do not count. */
  maxAgeMs?: number;
  /** Clock for staleness and cosignatures: epoch ms or a Date (default now). */
  now?: number | Date;
  /**
   * A checkpoint note the caller saved and trusts (signed by the log's key): the deciding proof's
   * checkpoint must be of its origin and no smaller, the same root at the same size (BUILD_SUPERSEDED,
   * LOG_INCONSISTENT, LOG_ORIGIN_MISMATCH otherwise). Implies the log check.
   */
  trustedCheckpoint?: string;
  /**
   * The kept build the answer was asked about (`build=`, history): that build's statement need not
   * be the last entry of its checkpoint. Otherwise a statement proof with entries after it is BUILD_SUPERSEDED.
   */
  asOfBuild?: string;
}

export interface AnswerVerification {
  /**
   * The verdict: null when the record is verified (its signature holds and, when a log proof was
   * given, it is in the log); NEVER_AUDITED when the absence proof holds (never a pass either);
   * otherwise the code of the step that failed.
   */
  code: VerifierErrorCode | null;
  /** The answer verified, as an object ({} for one that is not); the never-audited one when only a proof was given. */
  answer: Record<string, unknown>;
  /** The signature step (UNSIGNED for a never-audited answer). */
  signature: RecordVerification;
  /** The absence step, when the answer is never-audited and `absence` was given. */
  absence: AbsenceResult | null;
  /**
   * The log step, when `log` was given (or a policy implies it) and the answer is not decided by its
   * absence proof: the record's log proof, or for a private lookup's record its build statement's
   * entry in the log (whose failures carry the absence step's codes, STATEMENT_NOT_LOGGED among them).
   */
  log: LogProofResult | Extract<AbsenceResult, { valid: false }> | null;
  staleness: Staleness;
  /** The build whose absence proof holds, or null. */
  build: string | null;
  /** With `policy`, when the proof that decided was last witnessed, and by whom; null otherwise. */
  witnessed: Witnessed | null;
}

/** Whether an answer is the never-audited one (status `unverified`): its absence proof decides it, not a signature. */
export function isNeverAudited(answer: unknown): boolean {
  return (answer as { status?: unknown } | null)?.status === 'unverified';
}

/**
 * Verifies a lookup's answer: the absence proof of a never-audited answer, or the record's
 * signature; then, for a record, its log proof. With `policy`, the deciding proof's checkpoint
 * must be cosigned by its quorum, and `witnessed` says when it last was. Throws only on misuse (a
 * key set that is not one, a log key that is not a note verifier key); every verdict is in the result.
 *
 * @example
 *   const v = verifyAnswer({ answer: record, keySet, domain: 'shop.example', log: { proof, vkey } });
 *   if (v.code !== null) console.log('not verified:', v.code);
 */
export function verifyAnswer(input: VerifyAnswerInput): AnswerVerification {
  if (typeof input !== 'object' || input === null) throw new InvalidArgumentError('input', 'must be an object: { answer, keySet, ... }');
  // Options at the door: a malformed one is misuse, thrown, never a verdict and never a pass.
  const settings = witnessSettingsOf(input, 'input');
  const log = input.log === undefined ? undefined : answerLogOf(input.log);
  const domain = input.domain === undefined ? undefined : stringOf(input.domain, 'input.domain');
  const given = input.absence as { proof?: unknown; unavailable?: unknown } | undefined;
  if (given !== undefined && (typeof given !== 'object' || given === null || !('proof' in given || typeof given.unavailable === 'string')))
    throw new InvalidArgumentError('input.absence', 'must be { proof } (GET /v1/absence) or { unavailable: "why there is none" }');
  const checked = input.answer === undefined && domain !== undefined ? neverAuditedAnswer(domain) : input.answer;
  const witness: WitnessOptions = { ...settings };
  const answer = (typeof checked === 'object' && checked !== null ? checked : {}) as Record<string, unknown>;
  const asked = domain ?? answer.domain;
  // A never-audited answer is proven by its absence proof only, never on the word of whoever sent it.
  const absence =
    isNeverAudited(answer) && typeof asked === 'string' && input.absence
      ? checkAbsence(answer, asked, input.absence, input.keySet, {
          ...witness,
          ...(log ? { log: { vkey: log.vkey } } : {}),
          ...(input.asOfBuild === undefined ? {} : { asOfBuild: asOfBuildOf(input.asOfBuild, 'input.asOfBuild') }),
        })
      : null;
  // Checked even for a never-audited answer: UNSIGNED says it is no verified record.
  const signature = verifyRecord(checked, input.keySet, { domain, now: settings.now });
  // A never-audited answer has no entry in the log: its absence proof decides.
  const logResult = absence === null ? logStep(checked, log, witness) : null;
  const decided = absence ?? logResult;
  return {
    code: verdictOf(signature, absence, logResult),
    answer,
    signature,
    absence,
    log: logResult,
    staleness: signature.staleness,
    build: absence?.valid ? absence.build : null,
    // The witness step runs inside the proof's step (verifyLogProof, verifyAbsence) when a policy is given.
    witnessed:
      decided?.valid && decided.witnessedAt !== undefined ? { witnessedAt: decided.witnessedAt, cosigners: decided.cosigners ?? [] } : null,
  };
}

/** `input.log`, read: the log's verifier key (required), and the record's proof text when given. */
function answerLogOf(log: unknown): { vkey: string; proof?: string } {
  const { vkey } = logTrustOf(log, 'input.log');
  if (typeof vkey !== 'string') throw new InvalidArgumentError('input.log.vkey', "must be the text of the log's verifier key");
  const { proof } = log as { proof?: unknown };
  if (proof === undefined) return { vkey };
  return { vkey, proof: stringOf(proof, 'input.log.proof') };
}

/**
 * The log step of a record: its log proof, under the policy when one is given. A policy asks for
 * a witnessed checkpoint, which only a log proof carries: without one the record is not witnessed.
 */
function logStep(answer: unknown, log: VerifyAnswerInput['log'], witness: WitnessOptions): LogProofResult | null {
  if (log) {
    // A key without a proof proves nothing.
    if (log.proof === undefined) return { valid: false, code: 'MALFORMED_PROOF', message: 'no log proof of the record was given' };
    return verifyLogProof(answer, log.proof, { vkey: log.vkey }, witness);
  }
  if (witness.policy)
    return { valid: false, code: 'NOT_WITNESSED', message: 'a witness policy was given, but no log proof whose checkpoint it could check' };
  if (witness.trustedCheckpoint !== undefined)
    return { valid: false, code: 'MALFORMED_PROOF', message: 'a trusted checkpoint was given, but no log proof to hold against it' };
  return null;
}

/** The absence step: the proof holds for the domain asked, under the key set, and of the issuer the answer names. */
function checkAbsence(
  answer: Record<string, unknown>,
  domain: string,
  absence: { proof: unknown } | { unavailable: string },
  keySet: unknown,
  options: AbsenceOptions,
): AbsenceResult {
  if ('unavailable' in absence) return { valid: false, code: 'NOT_ABSENT', message: absence.unavailable };
  const verdict = verifyAbsence(absence.proof, domain, keySet, options);
  return verdict.valid ? (otherIssuer(answer, absence.proof) ?? verdict) : verdict;
}

/**
 * A never-audited answer holds only under the issuer of the build that proves it, as a gateway
 * answers under its live build's issuer only: an answer naming another issuer is not proven.
 */
function otherIssuer(answer: Record<string, unknown>, proof: unknown): AbsenceResult | null {
  const built = (proof as { statement?: { issuer?: unknown } } | null)?.statement?.issuer;
  if (answer.issuer === undefined || answer.issuer === built) return null;
  return {
    valid: false,
    code: 'NOT_ABSENT',
    message: `the answer names issuer ${shown(answer.issuer, false)}, but the build proving the absence is ${shown(built, false)}'s`,
  };
}

/** The absence proof decides a never-audited answer; otherwise the signature, then the log proof. */
function verdictOf(signature: RecordVerification, absence: AbsenceResult | null, log: LogProofResult | null): VerifierErrorCode | null {
  if (absence) return absence.valid ? 'NEVER_AUDITED' : absence.code;
  if (!signature.valid) return signature.code;
  return log && !log.valid ? log.code : null;
}

/** The never-audited answer an absence proof stands for, when no answer was fetched or saved. */
function neverAuditedAnswer(domain: string): Record<string, unknown> {
  return { domain, status: 'unverified', tier: null, score: null, last_audited_at: null, next_audit_at: null };
}
