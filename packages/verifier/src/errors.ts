/**
 * One error class per failure, each with a stable `code` from the registry
 * (`error-registry.ts`, re-exported here). Tests assert `code`, never the wording.
 */
import { isErrorCode, type ErrorCode } from './error-registry.ts';

export * from './error-registry.ts';

/**
 * Whether an error is one of ours, by its registered code rather than its class: errors thrown
 * inside @merchant-verify/verifier are instances of that package's own copy of these classes.
 * The edges (HTTP, MCP, CLI) recognize errors with this.
 */
export function isMvrError(error: unknown): error is MvrError {
  return error instanceof Error && isErrorCode((error as { code?: unknown }).code);
}

/** One error base with a stable `code`; one subclass per failure below. */
export class MvrError extends Error {
  /** Stable, machine-readable code: a key of the error registry. */
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A `domain` that is not a valid, registrable hostname. */
export class InvalidDomainError extends MvrError {
  constructor(message: string) {
    super('INVALID_DOMAIN', message);
  }
}

/** The caller presented no credentials, or credentials that are not a live API key. */
export class UnauthorizedError extends MvrError {
  /** True when a key was sent (so `WWW-Authenticate` says `error="invalid_token"`). */
  constructor(
    message: string,
    readonly keySent: boolean,
  ) {
    super('UNAUTHORIZED', message);
  }
}

/** A request to a path the gateway does not serve. */
export class NotFoundError extends MvrError {
  constructor(path: string) {
    super('NOT_FOUND', `no resource at ${path}`);
  }
}

/** A known path asked with a method it does not support. */
export class MethodNotAllowedError extends MvrError {
  constructor(
    method: string,
    readonly allow: readonly string[],
  ) {
    super('METHOD_NOT_ALLOWED', `${method} is not allowed here; use ${allow.join(', ')}`);
  }
}

/** A request body larger than the endpoint accepts. */
export class PayloadTooLargeError extends MvrError {
  constructor(message: string) {
    super('PAYLOAD_TOO_LARGE', message);
  }
}

/** A request body that is not what the endpoint takes (not JSON, the wrong shape, too many items). */
export class InvalidRequestError extends MvrError {
  constructor(message: string) {
    super('INVALID_REQUEST', message);
  }
}

/** A request body in a media type the endpoint does not take. */
export class UnsupportedMediaTypeError extends MvrError {
  constructor(message: string) {
    super('UNSUPPORTED_MEDIA_TYPE', message);
  }
}

/** A build id that is not among the kept builds. */
export class BuildNotFoundError extends MvrError {
  constructor(id: string, message = `no kept build "${id}" (GET /v1/builds lists them)`) {
    super('BUILD_NOT_FOUND', message);
  }
}

/**
 * A store that keeps no past builds (a copy of one build's folder, an http(s) origin): every
 * question about kept builds, history or changes is answered with this, worded once; `why` says
 * what the store is.
 */
export class NoBuildHistoryError extends BuildNotFoundError {
  constructor(why: string) {
    super('', `this gateway keeps no build history: ${why}; serve the records folder "mvr build" writes, or s3:// as "mvr publish" fills it`);
  }
}

/** The caller used up its quota; `retryAfterSeconds` says when its window resets. */
export class RateLimitedError extends MvrError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('RATE_LIMITED', message);
  }
}

/** The records store (folder or origin) cannot be read at all. */
export class StoreUnavailableError extends MvrError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORE_UNAVAILABLE', message, options);
  }
}

/** One record could not be assembled: unreadable, corrupt, or its signature does not verify. */
export class RecordUnavailableError extends MvrError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UNAVAILABLE', message, options);
  }
}

/** A value that RFC 8785 cannot express (NaN, Infinity, undefined, a Date, a class instance...). */
export class CanonicalizationError extends MvrError {
  /** JSON path of the offending member, e.g. `$.evidence.coverage`. */
  readonly path: string;
  constructor(path: string, message: string) {
    super('NOT_CANONICALIZABLE', `${path}: ${message}`);
    this.path = path;
  }
}

/** A signing or public key that is malformed, of the wrong type, or private where public is required. */
export class InvalidKeyError extends MvrError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_KEY', message, options);
  }
}

/** A key set that is not a JWK Set of public Ed25519 keys. */
export class InvalidKeySetError extends MvrError {
  constructor(message: string) {
    super('INVALID_KEY_SET', message);
  }
}

/** One problem in an audit input: where it is (file, line or index, member) and what is wrong. */
export interface AuditProblem {
  source: string;
  member?: string;
  message: string;
}

/** Formats a problem as one line: `audits/a.jsonl:12: sub_scores.visibility: must be <= 100`. */
export function formatProblem(p: AuditProblem): string {
  return p.member ? `${p.source}: ${p.member}: ${p.message}` : `${p.source}: ${p.message}`;
}

/** The build found bad audits; nothing was written. Carries every problem found. */
export class InvalidAuditsError extends MvrError {
  readonly problems: AuditProblem[];
  readonly total: number;
  constructor(problems: AuditProblem[], total = problems.length) {
    super('INVALID_AUDITS', `${total} problem${total === 1 ? '' : 's'} in the audits; nothing was written`);
    this.problems = problems;
    this.total = total;
  }
}

/** The build could not run or publish (I/O, lock held, no audits...). */
export class BuildError extends MvrError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('BUILD_FAILED', message, options);
  }
}

/** The command line does not fit the command: an unknown command or flag, a missing argument or value. */
export class UsageError extends MvrError {
  constructor(message: string) {
    super('INVALID_USAGE', message);
  }
}

/** The configuration (flags, env) is invalid; names the option. */
export class ConfigError extends MvrError {
  constructor(message: string) {
    super('INVALID_CONFIG', message);
  }
}

/** The signer's own check of a signature it just made failed (a faulty signer must not publish). */
export class SelfCheckFailedError extends MvrError {
  constructor() {
    super('SELF_CHECK_FAILED', 'signature self-check failed: the signature made does not verify');
  }
}

/** A key set or a record could not be fetched: network error, timeout, or an HTTP error status. */
export class FetchFailedError extends MvrError {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super('FETCH_FAILED', message);
  }
}

/** A domain with no entry in the transparency log (never audited, or built before the log). */
export class NotInLogError extends MvrError {
  constructor(message: string) {
    super('NOT_IN_LOG', message);
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
  constructor(message: string, options?: { cause?: unknown }) {
    super('LOG_INCONSISTENT', message, options);
  }
}

/** `GET /v1/absence` of a domain that has a record in the build: there is no absence to prove. */
export class HasRecordError extends MvrError {
  constructor(domain: string, build: string | null) {
    super('HAS_RECORD', `${domain} has a record in build ${build ?? 'live'}: ask GET /v1/verify for it`);
  }
}
