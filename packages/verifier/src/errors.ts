/**
 * The verifier's own codes and errors: what a caller of this package can meet, and nothing of the
 * service that publishes records. One base class with a stable `code`; one subclass per failure,
 * each with a `static code`. Tests assert `code`, never the wording.
 *
 * Verdicts (a bad signature, a proof that does not hold) are results, never thrown: their codes
 * are listed here so that a caller can switch on them. Misuse (a key set that is not one, a value
 * canonical JSON cannot express, a witness policy that cannot be used) throws.
 */

/** Every code this package answers with or throws, in one list. */
export const VERIFIER_ERROR_CODES = [
  // Thrown on misuse.
  'INVALID_KEY_SET',
  'NOT_CANONICALIZABLE',
  'INVALID_POLICY',
  // Thrown by the online client (`verifyOnline`): what a verification needs could not be fetched.
  'FETCH_FAILED',
  // Verdicts of a record's verification (`verifyRecord`).
  'UNSIGNED',
  'MALFORMED_RECORD',
  'UNKNOWN_KEY',
  'MALFORMED_SIGNATURE',
  'BAD_SIGNATURE',
  'DOMAIN_MISMATCH',
  // Verdicts of a log proof's verification (`verifyLogProof`).
  'MALFORMED_PROOF',
  'CHECKPOINT_NOT_SIGNED',
  'LOG_ORIGIN_MISMATCH',
  'NOT_INCLUDED',
  // Verdicts of an absence proof's verification (`verifyAbsence`): a proven absence is NEVER_AUDITED.
  'NEVER_AUDITED',
  'MALFORMED_ABSENCE_PROOF',
  'STATEMENT_NOT_SIGNED',
  'NOT_ABSENT',
  'STATEMENT_NOT_LOGGED',
  // Verdicts of a witnessed checkpoint (`verifyWitnessedCheckpoint`).
  'BAD_COSIGNATURE',
  'NOT_WITNESSED',
] as const;

export type VerifierErrorCode = (typeof VERIFIER_ERROR_CODES)[number];

/**
 * One error base with a stable `code`; one subclass per failure below. The service that publishes
 * records extends it with its own codes, so `code` is a string here.
 */
export class MvrError extends Error {
  /** Stable, machine-readable code. */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A value that RFC 8785 cannot express (NaN, Infinity, undefined, a Date, a class instance...). */
export class CanonicalizationError extends MvrError {
  static readonly code = 'NOT_CANONICALIZABLE';
  /** JSON path of the offending member, e.g. `$.evidence.coverage`. */
  readonly path: string;
  constructor(path: string, message: string) {
    super(CanonicalizationError.code, `${path}: ${message}`);
    this.path = path;
  }
}

/** A key set that is not a JWK Set of public Ed25519 keys. */
export class InvalidKeySetError extends MvrError {
  static readonly code = 'INVALID_KEY_SET';
  constructor(message: string) {
    super(InvalidKeySetError.code, message);
  }
}

/** A witness policy file that cannot be used; the message names the file and the line (0 for the file as a whole). */
export class PolicyError extends MvrError {
  static readonly code = 'INVALID_POLICY';
  readonly line: number;
  constructor(source: string, line: number, message: string) {
    super(PolicyError.code, `${source}${line > 0 ? `:${line}` : ''}: ${message}`);
    this.line = line;
  }
}

/**
 * What a verification needs could not be fetched (`verifyOnline`, `gatewaySource`): unreachable,
 * too slow, too large, not JSON, or an HTTP error. `status` is the HTTP status when there was one,
 * `problem` the code of the gateway's problem document when it sent one.
 */
export class FetchFailedError extends MvrError {
  static readonly code = 'FETCH_FAILED';
  readonly status: number | undefined;
  readonly problem: string | undefined;
  constructor(message: string, status?: number, problem?: string) {
    super(FetchFailedError.code, message);
    this.status = status;
    this.problem = problem;
  }
}
