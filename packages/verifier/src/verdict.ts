/**
 * The verdict of a verification, as every edge states it first: valid or not, the code that
 * decided, and that step's own words. What an answer claims (status, tier, score) comes after,
 * and counts only when `valid` is true.
 */
import type { VerifierErrorCode } from './errors.ts';
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
