/**
 * The errors of building, publishing and the command line: bad audits, a failed build, a bad flag
 * or setting, a fetch, the log checks. Re-exported by `errors.ts`, which the application imports.
 */
import { FetchFailedError, MvrError } from '@merchant-verify/verifier';

/**
 * What kind of problem an audit has, for grouping: `schema` (not JSON, not an audit, a bad
 * member or domain), `future_date` (dated after the build), `record_too_large` (its record would
 * pass the 64 KiB a record may have), `duplicate` (a domain audited again),
 * `record` (deriving or signing its record failed).
 */
export type AuditProblemKind = 'schema' | 'future_date' | 'record_too_large' | 'duplicate' | 'record';

/** Each kind as named in "... and 1,995 more <kind>", in the order the CLI groups them. */
export const PROBLEM_KIND_NAMES: Record<AuditProblemKind, string> = {
  schema: 'schema problems',
  future_date: 'dates in the future',
  record_too_large: 'records too large',
  duplicate: 'duplicate domains',
  record: 'records that could not be made',
};

/**
 * Problems of one kind printed one a line before the rest are counted: 2,000 audits of one
 * registrable domain are one mistake, and a screen of 1,999 lines hides the other kinds.
 * `--json` lists every problem kept.
 */
export const PROBLEMS_SHOWN_PER_KIND = 5;

/** One problem in an audit input: where it is (file, line or index, member), its kind and what is wrong. */
export interface AuditProblem {
  source: string;
  member?: string;
  kind: AuditProblemKind;
  message: string;
}

/** Formats a problem as one line: `audits/a.jsonl:12: sub_scores.visibility: must be <= 100`. */
export function formatProblem(p: AuditProblem): string {
  return p.member ? `${p.source}: ${p.member}: ${p.message}` : `${p.source}: ${p.message}`;
}

/**
 * The problems as lines a person reads, grouped by kind: the first {@link PROBLEMS_SHOWN_PER_KIND}
 * of each kind (in input order), then `... and 1,995 more duplicate domains` for the rest of it,
 * counted over every problem found, not only those kept.
 */
export function problemLines(error: InvalidAuditsError): string[] {
  const lines: string[] = [];
  for (const kind of Object.keys(PROBLEM_KIND_NAMES) as AuditProblemKind[]) {
    const shown = error.problems.filter((p) => p.kind === kind).slice(0, PROBLEMS_SHOWN_PER_KIND);
    lines.push(...shown.map(formatProblem));
    const more = (error.byKind[kind] ?? 0) - shown.length;
    if (more > 0) lines.push(`... and ${more.toLocaleString('en-US')} more ${PROBLEM_KIND_NAMES[kind]}`);
  }
  return lines;
}

/**
 * The build found bad audits; nothing was written. Carries the problems kept (the first ones in
 * input order) and how many of each kind were found in all.
 */
export class InvalidAuditsError extends MvrError {
  static readonly code = 'INVALID_AUDITS';
  readonly problems: AuditProblem[];
  readonly total: number;
  readonly byKind: Partial<Record<AuditProblemKind, number>>;
  constructor(problems: AuditProblem[], byKind: Partial<Record<AuditProblemKind, number>> = countByKind(problems)) {
    const total = Object.values(byKind).reduce((n, k) => n + k, 0);
    super(InvalidAuditsError.code, `${total} problem${total === 1 ? '' : 's'} in the audits; nothing was written`);
    this.problems = problems;
    this.total = total;
    this.byKind = byKind;
  }
}

/** How many problems of each kind `problems` has. */
export function countByKind(problems: AuditProblem[]): Partial<Record<AuditProblemKind, number>> {
  const counts: Partial<Record<AuditProblemKind, number>> = {};
  for (const p of problems) counts[p.kind] = (counts[p.kind] ?? 0) + 1;
  return counts;
}

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
