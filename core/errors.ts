/**
 * One error base with a stable `code`; one subclass per failure. Shells (HTTP, MCP, CLI)
 * turn these into problem documents, `isError` results and exit codes; nothing inside does.
 * Tests assert `code`, never the wording.
 */
export class MvrError extends Error {
  /** Stable, machine-readable code. */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    // A caller's mistake (bad key, bad domain, over quota) is answered, not debugged: skip the
    // stack trace V8 would build for it, a visible cost when a flood of bad requests arrives.
    const limit = Error.stackTraceLimit;
    if (CALLER_ERRORS.has(code)) Error.stackTraceLimit = 0;
    super(message, options);
    Error.stackTraceLimit = limit;
    this.code = code;
    this.name = new.target.name;
  }
}

const CALLER_ERRORS = new Set(['UNAUTHORIZED', 'INVALID_DOMAIN', 'RATE_LIMITED', 'NOT_FOUND', 'METHOD_NOT_ALLOWED']);

/** A `domain` that is not a valid, registrable hostname. */
export class InvalidDomainError extends MvrError {
  constructor(message: string) {
    super('INVALID_DOMAIN', message);
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
