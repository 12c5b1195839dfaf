/**
 * The verdict of a verification, as every edge states it first: valid or not, the code that
 * decided, and that step's own words. What an answer claims (status, tier, score) comes after,
 * and counts only when `valid` is true.
 */
import type { VerifierErrorCode } from '#shared';
import { clockOf, parseTimestamp } from '#shared';
import type { AnswerVerification } from './verify-answer.ts';
import type { BundleVerification } from './verify-bundle.ts';

export interface Verdict {
  /** True only when every check asked for ran and held: a proven absence (NEVER_AUDITED) is not valid either. */
  valid: boolean;
  /** Null when valid; otherwise the code of the step that decided. */
  code: VerifierErrorCode | null;
  /** Null when valid; otherwise why, in the deciding step's words. */
  message: string | null;
}

/**
 * The verdict of {@link verifyAnswer}'s result (or `verifyBundle`'s): its code, and the message of
 * the step that gave it.
 *
 * @example
 *   const { valid, code, message } = verdictOf(verifyAnswer({ answer, keySet }));
 *   if (!valid) console.log(`INVALID (${code}): ${message}`);
 */
export function verdictOf(verification: AnswerVerification | BundleVerification): Verdict {
  const { code, absence, signature, log } = verification;
  if (code === null) return { valid: true, code: null, message: null };
  if (code === 'NEVER_AUDITED' && absence?.valid)
    return {
      valid: false,
      code,
      message: `no record in build ${absence.build} (issued ${absence.issuedAt}): never audited, which is not verified`,
    };
  // A bundle's own steps come after the answer's: its shape, its place in the map, its statement.
  const b = 'place' in verification ? verification : null;
  if (b?.bundle) return { valid: false, code, message: b.bundle.message };
  const steps = [absence, signature, log, b?.place ?? null, b?.statement ?? null];
  const step = steps.find((s) => s !== null && !s.valid && s.code === code) as { message: string } | undefined;
  return { valid: false, code, message: step?.message ?? code };
}

/**
 * How old what an answer stands on is. Without a policy and a maximum age nothing refuses an answer
 * for its age (BUILD_SUPERSEDED refuses one whose own checkpoint shows a later build), so the caller
 * is told: the build's age always, and the newest cosignature's when a policy verified some.
 */
export interface AnswerAge {
  /** When the answer's build was issued: the absence proof's statement's `issued_at`, else the record's own; null when neither says. */
  issuedAt: string | null;
  /** Whole seconds from `issuedAt` to now (0 for a time ahead of it); null without `issuedAt`. */
  buildAgeSeconds: number | null;
  /** With a policy: the newest cosignature that verified on the deciding checkpoint, epoch ms; null otherwise. */
  newestCosignatureAt: number | null;
  /** Whole seconds from `newestCosignatureAt` to now; null without it. */
  newestCosignatureAgeSeconds: number | null;
}

/**
 * The age of {@link verifyAnswer}'s result at `now` (epoch ms or a Date; default now): the build's,
 * from `issued_at`, and the newest verified cosignature's, from the witness step (`policy`).
 *
 * @example
 *   const { buildAgeSeconds } = ageOf(verifyAnswer({ answer, keySet }));
 *   if (buildAgeSeconds !== null && buildAgeSeconds > 40 * 86_400) console.log('older than a monthly build should be');
 */
export function ageOf(verification: AnswerVerification, now?: number | Date): AnswerAge {
  const at = clockOf(now, 'now');
  const issued = verification.absence?.valid ? verification.absence.issuedAt : verification.answer.issued_at;
  const issuedAt = typeof issued === 'string' && parseTimestamp(issued) !== null ? issued : null;
  // witnessedAt is the newest cosignature that counted.
  const newest = verification.witnessed?.witnessedAt ?? null;
  const seconds = (t: number) => Math.max(0, Math.floor((at - t) / 1000));
  return {
    issuedAt,
    buildAgeSeconds: issuedAt === null ? null : seconds(parseTimestamp(issuedAt)!),
    newestCosignatureAt: newest,
    newestCosignatureAgeSeconds: newest === null ? null : seconds(newest),
  };
}
