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
  'INVALID_ARGUMENT',
  'INVALID_VERIFIER_KEY',
  'MALFORMED_NOTE',
  // Thrown by the online client (`verifyOnline`): what a verification needs could not be fetched.
  'FETCH_FAILED',
  // Verdicts of a record's verification (`verifyRecord`).
  'UNSIGNED',
  'MALFORMED_RECORD',
  'UNKNOWN_KEY',
  'KEY_NOT_TRUSTED',
  'MALFORMED_SIGNATURE',
  'BAD_SIGNATURE',
  'DOMAIN_MISMATCH',
  // Verdicts of a log proof's verification (`verifyLogProof`).
  'MALFORMED_PROOF',
  'CHECKPOINT_NOT_SIGNED',
  'LOG_ORIGIN_MISMATCH',
  'NOT_INCLUDED',
  // The gateway keeps no log proof of the record (a build made without a log key, a mirror that holds none): nothing to check, not a failed proof.
  'NOT_IN_LOG',
  // A check was asked for (a witness policy implies the log check) but nothing says which log key to check with.
  'LOG_KEY_MISSING',
  // Verdicts of an absence proof's verification (`verifyAbsence`): a proven absence is NEVER_AUDITED.
  'NEVER_AUDITED',
  'MALFORMED_ABSENCE_PROOF',
  'STATEMENT_NOT_SIGNED',
  'NOT_ABSENT',
  'STATEMENT_NOT_LOGGED',
  // The statement's log proof is against a checkpoint that holds entries after it: a later build was logged (not a kept build's answer).
  'BUILD_SUPERSEDED',
  // With a checkpoint the caller trusts: the answer's checkpoint has its size but another root (two views of one log).
  'LOG_INCONSISTENT',
  // Verdicts of a compact answer's verification (`verifyCompactAnswer`), before the domain's own entry or absence is judged.
  'MALFORMED_PREFIX_ANSWER',
  'PREFIX_MISMATCH',
  'PADDING_MISMATCH',
  'INCOMPLETE_PREFIX_ANSWER',
  // A compact answer's statement asks for more bits of the hash than the rule gives for its build's size.
  'PREFIX_TOO_LONG',
  // Verdicts of a bundle (`verifyBundle`), besides those of the record, the absence proof and the statement it carries.
  'MALFORMED_BUNDLE',
  // A record that is not what its build's map committed (a bundle's): its bytes or fields are not its entry's.
  'RECORD_NOT_IN_MAP',
  // Online (`verifyOnline`), a record checked with the log is tied to its build by the bundle: looked up twice, the bundle's record was not the answer.
  'BUNDLE_MISMATCH',
  // Verdicts of a witnessed checkpoint (`verifyWitnessedCheckpoint`).
  'BAD_COSIGNATURE',
  'NOT_WITNESSED',
] as const;

export type VerifierErrorCode = (typeof VERIFIER_ERROR_CODES)[number];

/** The codes this package throws (misuse); every other code of the list is a verdict, in a result. */
export type VerifierThrownCode = Extract<
  VerifierErrorCode,
  'INVALID_KEY_SET' | 'NOT_CANONICALIZABLE' | 'INVALID_POLICY' | 'INVALID_ARGUMENT' | 'INVALID_VERIFIER_KEY' | 'MALFORMED_NOTE'
>;

/** The names of an error's classes, own class first: the brand `instanceof` reads across copies. */
const CLASSES = Symbol.for('merchant-verify.error.classes');

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
    const classes: string[] = [];
    for (let c: unknown = new.target; typeof c === 'function' && c !== Error; c = Object.getPrototypeOf(c)) classes.push(c.name);
    Object.defineProperty(this, CLASSES, { value: Object.freeze(classes) });
  }

  /**
   * `error instanceof NoteError` holds for a NoteError of either compiled copy of this module: the
   * shared package is private, so the service and the verifier package each ship one, and an error
   * the verifier throws meets the service's class (undici brands its errors with Symbol.for alike).
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class on the right of instanceof (a subclass too), not MvrError.
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    const classes = typeof value === 'object' && value !== null ? (value as { [CLASSES]?: unknown })[CLASSES] : undefined;
    // biome-ignore lint/complexity/noThisInStatic: as above.
    return Array.isArray(classes) && classes.includes(this.name);
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
 * An argument a function cannot take: an option of the wrong type or out of range (a maximum age
 * that is not a finite, positive number of milliseconds, a clock that is not a time, a log without
 * its key), or a value outside what the function is defined for. `argument` names it.
 */
export class InvalidArgumentError extends MvrError {
  static readonly code = 'INVALID_ARGUMENT';
  /** The argument or option at fault, e.g. `options.maxAgeMs`. */
  readonly argument: string;
  constructor(argument: string, message: string) {
    super(InvalidArgumentError.code, `${argument}: ${message}`);
    this.argument = argument;
  }
}

/**
 * A signed note, checkpoint or tlog-proof that cannot be read (c2sp.org/signed-note,
 * tlog-checkpoint, tlog-proof). The verify functions turn it into a verdict on the proof; the
 * format functions of the log's own code throw it.
 */
export class NoteError extends MvrError {
  static readonly code: string = 'MALFORMED_NOTE';
  constructor(message: string) {
    super(new.target.code, message);
  }
}

/** A note verifier key (`<name>+<key ID>+<key>`) that cannot be read, or is not of the type asked for. */
export class InvalidVerifierKeyError extends NoteError {
  static override readonly code: string = 'INVALID_VERIFIER_KEY';
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
