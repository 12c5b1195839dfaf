/**
 * Every error code of merchant-verify, in one registry, and one error class per failure.
 *
 * An entry gives the code's HTTP status (null for codes the HTTP API never answers with), the
 * title of its problem document, and the exit code of the CLI. Problem documents, the OpenAPI
 * enum, MCP `isError` results and CLI exits are all derived from this table at the edges;
 * nothing else maps a code to a number. Tests assert `code`, never the wording.
 */
export const ERROR_REGISTRY = {
  // Answered over HTTP (and MCP): a problem document with this status.
  INVALID_DOMAIN: { status: 400, title: 'Invalid domain', exit: 3 },
  INVALID_REQUEST: { status: 400, title: 'Invalid request', exit: 1 },
  UNAUTHORIZED: { status: 401, title: 'Unauthorized', exit: 1 },
  NOT_FOUND: { status: 404, title: 'Not found', exit: 1 },
  BUILD_NOT_FOUND: { status: 404, title: 'Build not found', exit: 1 },
  NOT_IN_LOG: { status: 404, title: 'Not in the log', exit: 13 },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed', exit: 1 },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large', exit: 1 },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type', exit: 1 },
  RATE_LIMITED: { status: 429, title: 'Too many requests', exit: 1 },
  INTERNAL: { status: 500, title: 'Internal error', exit: 1 },
  STORE_UNAVAILABLE: { status: 503, title: 'Verification records unavailable', exit: 1 },
  UNAVAILABLE: { status: 503, title: 'Record temporarily unavailable', exit: 1 },
  // Raised by the build and the CLI only.
  INVALID_CONFIG: { status: null, title: 'Invalid configuration', exit: 2 },
  INVALID_KEY: { status: null, title: 'Invalid key', exit: 2 },
  INVALID_KEY_SET: { status: null, title: 'Invalid key set', exit: 3 },
  INVALID_AUDITS: { status: null, title: 'Invalid audits', exit: 3 },
  NOT_CANONICALIZABLE: { status: null, title: 'Not canonicalizable', exit: 3 },
  BUILD_FAILED: { status: null, title: 'Build failed', exit: 1 },
  SELF_CHECK_FAILED: { status: null, title: 'Signature self-check failed', exit: 1 },
  FETCH_FAILED: { status: null, title: 'Fetch failed', exit: 12 },
  LOG_INCONSISTENT: { status: null, title: 'Log not an append-only extension', exit: 14 },
  // Verdicts of a record's verification (`verifyRecord`, `mvr verify`): results, never thrown.
  UNSIGNED: { status: null, title: 'Record unsigned', exit: 10 },
  MALFORMED_RECORD: { status: null, title: 'Malformed record', exit: 11 },
  UNKNOWN_KEY: { status: null, title: 'Unknown key', exit: 11 },
  MALFORMED_SIGNATURE: { status: null, title: 'Malformed signature', exit: 11 },
  BAD_SIGNATURE: { status: null, title: 'Bad signature', exit: 11 },
  DOMAIN_MISMATCH: { status: null, title: 'Record of another domain', exit: 11 },
  // Verdicts of a log proof's verification (`verifyLogProof`, `mvr verify --log`).
  MALFORMED_PROOF: { status: null, title: 'Malformed log proof', exit: 13 },
  CHECKPOINT_NOT_SIGNED: { status: null, title: 'Checkpoint not signed by the log', exit: 13 },
  LOG_ORIGIN_MISMATCH: { status: null, title: 'Checkpoint of another log', exit: 13 },
  NOT_INCLUDED: { status: null, title: 'Record not included in the log', exit: 13 },
} as const satisfies Record<string, { status: number | null; title: string; exit: number }>;

export type ErrorCode = keyof typeof ERROR_REGISTRY;

/**
 * Whether an error is one of ours, by its registered code rather than its class: errors thrown
 * inside @merchant-verify/verifier are instances of that package's own copy of these classes.
 * The edges (HTTP, MCP, CLI) recognize errors with this.
 */
export function isMvrError(error: unknown): error is MvrError {
  return error instanceof Error && isErrorCode((error as { code?: unknown }).code);
}

/** The codes the HTTP API answers with (a status in the registry), in registry order. */
export const HTTP_ERROR_CODES = (Object.keys(ERROR_REGISTRY) as ErrorCode[]).filter((code) => ERROR_REGISTRY[code].status !== null);

/** Whether a code (from a problem document, say) is one of the registry's. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_REGISTRY, code);
}

/** The CLI's exit code for an error code; 1 for anything unknown. */
export function exitCodeOf(code: string): number {
  return isErrorCode(code) ? ERROR_REGISTRY[code].exit : 1;
}

/** One error base with a stable `code`; one subclass per failure below. */
export class MvrError extends Error {
  /** Stable, machine-readable code: a key of {@link ERROR_REGISTRY}. */
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

/** A log that is not an append-only extension of an earlier checkpoint, or whose files disagree with its checkpoint. */
export class LogInconsistentError extends MvrError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('LOG_INCONSISTENT', message, options);
  }
}
