/**
 * Bad audits, as the build reports them: each problem's place and kind, the lines a person reads
 * (bounded per kind) and the one error that carries them all. Re-exported by `errors.ts`, which
 * the application imports.
 */
import { MvrError } from '@merchant-verify/verifier';

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
