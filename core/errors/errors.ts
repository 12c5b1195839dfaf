/**
 * The service's and CLI's errors: one class per failure, each with a `static code` from the
 * registry (`error-registry.ts`, re-exported here). They extend the verifier package's `MvrError`,
 * whose own errors (a bad key set, a value canonical JSON cannot express, a witness policy) are
 * re-exported here too, so the application imports every error from this one module: the
 * errors of answering a request, of the stores, of keys and witnesses, of building, publishing and
 * the command line, and of the log are here; a build's report of bad audits (audit-problems.ts)
 * and the lock module's errors (lock-errors.ts) sit beside it, re-exported below.
 * Tests assert `code`, never the wording.
 */
import { FetchFailedError, MvrError } from '@merchant-verify/verifier';
import { type ErrorCode, isErrorCode } from './registry.ts';

export {
  CanonicalizationError,
  InvalidKeySetError,
  MvrError,
  PolicyError,
  VERIFIER_ERROR_CODES,
  type VerifierErrorCode,
} from '@merchant-verify/verifier';
export * from './registry.ts';

/** An error of merchant-verify, its code a key of the registry. */
export type RegisteredError = MvrError & { readonly code: ErrorCode };

/**
 * Whether an error is one of ours, by its registered code rather than its class: errors thrown
 * inside @merchant-verify/verifier are instances of that package's own copy of these classes.
 * The edges (HTTP, MCP, CLI) recognize errors with this.
 */
export function isMvrError(error: unknown): error is RegisteredError {
  return error instanceof Error && isErrorCode((error as { code?: unknown }).code);
}

/** A `domain` that is not a valid, registrable hostname. */
export class InvalidDomainError extends MvrError {
  static readonly code = 'INVALID_DOMAIN';
  constructor(message: string) {
    super(InvalidDomainError.code, message);
  }
}

/** A prefix lookup's prefix that is not lowercase hex of the live build's prefix length. */
export class InvalidPrefixError extends MvrError {
  static readonly code = 'INVALID_PREFIX';
  constructor(message: string) {
    super(InvalidPrefixError.code, message);
  }
}

/** A compact lookup whose bits are not the live build's (`lookup.bits`): a client that lengthens its prefix is told so, never served. */
export class PrefixLengthMismatchError extends MvrError {
  static readonly code = 'PREFIX_LENGTH_MISMATCH';
  constructor(message: string) {
    super(PrefixLengthMismatchError.code, message);
  }
}

/** The caller presented no credentials, or credentials that are not a live API key. */
export class UnauthorizedError extends MvrError {
  static readonly code = 'UNAUTHORIZED';
  /** True when a key was sent (so `WWW-Authenticate` says `error="invalid_token"`). */
  constructor(
    message: string,
    readonly keySent: boolean,
  ) {
    super(UnauthorizedError.code, message);
  }
}

/** A valid API key asking what its scopes do not allow (an ordinary key on a mirror route). */
export class ForbiddenError extends MvrError {
  static readonly code = 'FORBIDDEN';
  constructor(message: string) {
    super(ForbiddenError.code, message);
  }
}

/** A `Range` no byte of the file falls in (RFC 9110 15.5.17); `size` is the file's length, for `Content-Range`. */
export class RangeNotSatisfiableError extends MvrError {
  static readonly code = 'RANGE_NOT_SATISFIABLE';
  constructor(
    readonly size: number,
    range: string,
  ) {
    super(RangeNotSatisfiableError.code, `the range ${JSON.stringify(range.slice(0, 100))} has no byte of the file, which has ${size}`);
  }
}

/** A request to a path the gateway does not serve. */
export class NotFoundError extends MvrError {
  static readonly code = 'NOT_FOUND';
  constructor(path: string) {
    super(NotFoundError.code, `no resource at ${path}`);
  }
}

/** A known path asked with a method it does not support. */
export class MethodNotAllowedError extends MvrError {
  static readonly code = 'METHOD_NOT_ALLOWED';
  constructor(
    method: string,
    readonly allow: readonly string[],
  ) {
    super(MethodNotAllowedError.code, `${method} is not allowed here; use ${allow.join(', ')}`);
  }
}

/** A request body larger than the endpoint accepts. */
export class PayloadTooLargeError extends MvrError {
  static readonly code = 'PAYLOAD_TOO_LARGE';
  constructor(message: string) {
    super(PayloadTooLargeError.code, message);
  }
}

/** A request body that is not what the endpoint takes (not JSON, the wrong shape, too many items). */
export class InvalidRequestError extends MvrError {
  static readonly code = 'INVALID_REQUEST';
  constructor(message: string) {
    super(InvalidRequestError.code, message);
  }
}

/** A request body in a media type the endpoint does not take. */
export class UnsupportedMediaTypeError extends MvrError {
  static readonly code = 'UNSUPPORTED_MEDIA_TYPE';
  constructor(message: string) {
    super(UnsupportedMediaTypeError.code, message);
  }
}

/** An encapsulated request (`message/ohttp-req`) for a key id or suite this gateway does not hold. */
export class OhttpKeyUnknownError extends MvrError {
  static readonly code = 'OHTTP_KEY_UNKNOWN';
  constructor(message: string) {
    super(OhttpKeyUnknownError.code, message);
  }
}

/** An encapsulated request that does not open (its ciphertext, or the Binary HTTP request inside). */
export class OhttpDecapsulationError extends MvrError {
  static readonly code = 'OHTTP_DECAPSULATION_FAILED';
  constructor(message: string) {
    super(OhttpDecapsulationError.code, message);
  }
}

/** An inner request, opened, for a route the gateway does not offer through Oblivious HTTP. */
export class OhttpRouteRefusedError extends MvrError {
  static readonly code = 'OHTTP_ROUTE_REFUSED';
  constructor(message: string) {
    super(OhttpRouteRefusedError.code, message);
  }
}

/** A gateway's key configuration the client will not encrypt to: malformed, of another suite, or not the one its build signed. */
export class OhttpKeyConfigError extends MvrError {
  static readonly code = 'OHTTP_KEY_CONFIG_INVALID';
  constructor(message: string) {
    super(OhttpKeyConfigError.code, message);
  }
}

/** A build id that is not among the kept builds. */
export class BuildNotFoundError extends MvrError {
  static readonly code = 'BUILD_NOT_FOUND';
  constructor(id: string, message = `no kept build "${id}" (GET /v1/builds lists them)`) {
    super(BuildNotFoundError.code, message);
  }
}

/**
 * A store that keeps no past builds (a copy of one build's folder, an http(s) origin): every
 * question about kept builds, history or changes is answered with this, worded once; `why` says
 * what the store is.
 */
export class NoBuildHistoryError extends BuildNotFoundError {
  constructor(why: string) {
    super(
      '',
      `this gateway keeps no build history: ${why}; serve the records folder "mvr build" writes, or s3:// as "mvr publish" fills it`,
    );
  }
}

/** The caller used up its quota; `retryAfterSeconds` says when its window resets. */
export class RateLimitedError extends MvrError {
  static readonly code = 'RATE_LIMITED';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(RateLimitedError.code, message);
  }
}

/** The key already holds as many streamed answers (mirror files) as one gateway process gives a key at once; `retryAfterSeconds` says when to try again. */
export class TooManyStreamsError extends MvrError {
  static readonly code = 'TOO_MANY_STREAMS';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(TooManyStreamsError.code, message);
  }
}

/** The records store (folder or origin) cannot be read at all. */
export class StoreUnavailableError extends MvrError {
  static readonly code = 'STORE_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(StoreUnavailableError.code, message, options);
  }
}

/**
 * A read from a store or a peer refused at its kind's size limit (core/limits.ts): the body is
 * not read past the limit, and what was served before stays served.
 */
export class ReadTooLargeError extends StoreUnavailableError {
  constructor(
    /** The kind of file (a key of the limits table). */
    readonly file: string,
    readonly limitBytes: number,
  ) {
    super(`a ${file} read from the store is larger than the ${limitBytes} bytes it may have`);
  }
}

/** A read from a store or a peer not finished by its total deadline (retries included): abandoned, what was served before stays served. */
export class ReadDeadlineError extends StoreUnavailableError {
  constructor(
    readonly file: string,
    readonly deadlineMs: number,
  ) {
    super(`a ${file} read from the store took longer than its ${deadlineMs} ms deadline`);
  }
}

/** One record could not be assembled: unreadable, corrupt, or its signature does not verify. */
export class RecordUnavailableError extends MvrError {
  static readonly code = 'UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(RecordUnavailableError.code, message, options);
  }
}

/**
 * A stored record that is not the one its build's map commits to (its bytes do not hash to its
 * entry's record_hash, or its verdict is not the entry's): UNAVAILABLE like any record not served,
 * told apart in the log and the refusal metric, because it means the store holds records the
 * build did not sign off (an older record of the domain put back), not that a read failed.
 */
export class RecordNotInMapError extends RecordUnavailableError {}

/** A signing or public key that is malformed, of the wrong type, or private where public is required. */
export class InvalidKeyError extends MvrError {
  static readonly code = 'INVALID_KEY';
  constructor(message: string, options?: { cause?: unknown }) {
    super(InvalidKeyError.code, message, options);
  }
}

/** Too few witnesses of the policy cosigned a build's checkpoint: the build does not go live (the previous one stays). */
export class WitnessQuorumNotMetError extends MvrError {
  static readonly code = 'WITNESS_QUORUM_NOT_MET';
  constructor(message: string) {
    super(WitnessQuorumNotMetError.code, message);
  }
}

/** A refresh or publish whose served checkpoint did not get a quorum of fresh cosignatures (what was received is written). */
export class NotFreshlyWitnessedError extends MvrError {
  static readonly code = 'NOT_FRESHLY_WITNESSED';
  constructor(message: string) {
    super(NotFreshlyWitnessedError.code, message);
  }
}

/** Where in a build a mirror's check failed: the pack (its number in the statement and its hash) and the record (its map index and domain), when it applies. */
export interface MirrorPlace {
  pack?: { number: number; sha256: string };
  record?: { index: number; domain: string | null };
}

/**
 * `mvr mirror` refused the build it fetched: a check failed (the statement's signature, a pack's
 * hash or length, a record's signature or place, the count, the map's root, the statement in the
 * log). The message names what failed and where; the mirror's previous build stays live.
 */
export class MirrorRefusedError extends MvrError {
  static readonly code = 'MIRROR_REFUSED';
  constructor(
    message: string,
    readonly place: MirrorPlace = {},
    options?: { cause?: unknown },
  ) {
    super(MirrorRefusedError.code, message, options);
  }
}

// Building, publishing and the command line.

/** The build could not run or publish (I/O, lock held, no audits...). */
export class BuildError extends MvrError {
  static readonly code = 'BUILD_FAILED';
  constructor(message: string, options?: { cause?: unknown }) {
    super(BuildError.code, message, options);
  }
}

/** The command line does not fit the command: an unknown command or flag, a missing argument or value. */
export class UsageError extends MvrError {
  static readonly code = 'INVALID_USAGE';
  constructor(message: string) {
    super(UsageError.code, message);
  }
}

/** The configuration (flags, env) is invalid; names the option. */
export class ConfigError extends MvrError {
  static readonly code = 'INVALID_CONFIG';
  constructor(message: string) {
    super(ConfigError.code, message);
  }
}

/** The signer's own check of a signature it just made failed (a faulty signer must not publish). */
export class SelfCheckFailedError extends MvrError {
  static readonly code = 'SELF_CHECK_FAILED';
  constructor() {
    super(SelfCheckFailedError.code, 'signature self-check failed: the signature made does not verify');
  }
}

/** A key set or a record could not be fetched: the verifier package's own class (its online client throws it too). */
export { FetchFailedError };

/** An answer larger than what its kind may have (core/limits.ts): not read past the limit. */
export class AnswerTooLargeError extends FetchFailedError {
  constructor(
    readonly url: string,
    readonly limitBytes: number,
  ) {
    super(`${url} answered more than the ${limitBytes} bytes its answer may have`);
  }
}

/** An answer that redirects elsewhere: never followed, so a key or a request goes only where it was sent. */
export class RedirectRefusedError extends FetchFailedError {
  constructor(url: string, status: number) {
    super(`${url} answered ${status}, a redirect, which is not followed: give the URL it names instead`, status);
  }
}

/** A domain with no entry in the transparency log (never audited, or built before the log). */
export class NotInLogError extends MvrError {
  static readonly code = 'NOT_IN_LOG';
  constructor(message: string) {
    super(NotInLogError.code, message);
  }
}

/** A store that holds no transparency log of its own (an http(s) origin serves one build's records only). */
export class NoLogError extends NotInLogError {
  constructor(why: string) {
    super(`this gateway serves no log proofs: ${why}; log proofs come from a gateway on a records folder or a bucket`);
  }
}

/** A store that builds cannot be published to or pulled from (only a bucket is), named by the flag that gave it. */
export class StoreNotPublishedError extends ConfigError {
  constructor(flag: string, url: string) {
    super(`${flag} ${url}: not s3://BUCKET/PREFIX (builds are published to and pulled from a bucket only)`);
  }
}

/** A log that is not an append-only extension of an earlier checkpoint, or whose files disagree with its checkpoint. */
export class LogInconsistentError extends MvrError {
  static readonly code = 'LOG_INCONSISTENT';
  constructor(message: string, options?: { cause?: unknown }) {
    super(LogInconsistentError.code, message, options);
  }
}

/** `GET /v1/absence` of a domain that has a record in the build: there is no absence to prove. */
export class HasRecordError extends MvrError {
  static readonly code = 'HAS_RECORD';
  constructor(domain: string, build: string | null) {
    super(HasRecordError.code, `${domain} has a record in build ${build ?? 'live'}: ask GET /v1/verify for it`);
  }
}

export * from './audit-problems.ts';
export * from './lock-errors.ts';
