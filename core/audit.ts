import { parseTimestamp } from '@merchant-verify/verifier/internal/issuer';
import { z } from 'zod';
import { normalizeDomain } from './domain.ts';
import { type AuditProblem, MvrError } from './errors.ts';

const percent = z.number().min(0).max(100);
const fraction = z.number().min(0).max(1);
const timestamp = z.string().refine((s) => parseTimestamp(s) !== null, {
  message: 'must be an ISO 8601 timestamp with Z or an offset, e.g. 2026-10-01T12:00:00Z',
});
// Shown forms are `thin_evidence` and `missing_signal:<name>`; the rest of the list is the
// auditor's, so only the shape is checked: a lowercase word, optionally `:` and a value.
const flag = z.string().regex(/^[a-z][a-z0-9_]*(:[^\s:][^\s]*)?$/, 'must look like "name" or "name:value" (lowercase, no spaces)');

/** One audit result as `mvr build` reads it (docs/audit-input.md). Unknown members are refused, so a typo never goes unnoticed. */
export const auditSchema = z
  .object({
    domain: z.string(),
    score: percent.nullable(),
    sub_scores: z.strictObject({ visibility: percent, recommendation_rate: percent, technical_readiness: percent }),
    flags: z.array(flag).default([]),
    evidence: z.strictObject({
      ok: z.boolean(),
      coverage: fraction,
      site_coverage: fraction,
      engines_ran: z.array(z.string().min(1)),
      engines_skipped: z.array(z.string().min(1)).default([]),
      blockers: z.array(z.union([z.string(), z.record(z.string(), z.unknown())])).default([]),
    }),
    archetype: z.string().trim().min(1),
    first_seen: timestamp,
    last_audited_at: timestamp,
    flagged: z.boolean().optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.score === null && a.evidence.ok && !a.flagged) {
      ctx.addIssue({
        code: 'custom',
        path: ['score'],
        message: 'may be null only when evidence is thin (evidence.ok false) or the audit is flagged',
      });
    }
    const first = parseTimestamp(a.first_seen),
      last = parseTimestamp(a.last_audited_at);
    if (first !== null && last !== null && first > last) {
      ctx.addIssue({ code: 'custom', path: ['first_seen'], message: 'is after last_audited_at' });
    }
  });

/**
 * How far an audit's dates, or `--now`, may run ahead of the clock they are checked against: two
 * machines' clocks disagree by seconds, never by minutes. Anything later is a mistake (a typo'd
 * year, a clock set wrong) that would otherwise be signed as freshness.
 */
export const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;

export type AuditInput = z.input<typeof auditSchema>;
/** A validated audit with its domain normalized. */
export type Audit = z.output<typeof auditSchema>;

/**
 * The audit's dates that are later than the build's `issued_at` (plus {@link FUTURE_TOLERANCE_MS}),
 * each a problem naming its member. Reads the audit as given: a date that is not a timestamp is
 * the schema's problem, not this one's.
 */
export function futureDateProblems(audit: unknown, source: string, issuedAt: string): AuditProblem[] {
  const limit = parseTimestamp(issuedAt)! + FUTURE_TOLERANCE_MS;
  const dates = (typeof audit === 'object' && audit !== null ? audit : {}) as Record<string, unknown>;
  return (['first_seen', 'last_audited_at'] as const).flatMap((member) => {
    const date = dates[member];
    const at = typeof date === 'string' ? parseTimestamp(date) : null;
    if (at === null || at <= limit) return [];
    const message = `${date as string} is later than the build's issued_at ${issuedAt}: an audit cannot be dated in the future`;
    return [{ source, member, kind: 'future_date' as const, message }];
  });
}

/**
 * Validates one parsed audit. Returns the audit with `domain` normalized, or every problem found
 * in it at once, each naming `source` (file and line or index) and the member: the schema's, the
 * domain's and, given the build's `issuedAt`, dates in the future, so one fix fixes them all.
 */
export function validateAudit(value: unknown, source: string, issuedAt?: string): { audit: Audit } | { problems: AuditProblem[] } {
  const parsed = auditSchema.safeParse(value);
  const problems: AuditProblem[] = [];
  const schema = (member: string | undefined, message: string) =>
    problems.push({ source, ...(member === undefined ? {} : { member }), kind: 'schema', message });
  if (!parsed.success) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { problems: [{ source, kind: 'schema', message: 'an audit must be a JSON object' }] };
    }
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) schema(memberPath([...issue.path, key]), 'unknown member');
      } else if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) {
        schema(memberPath(issue.path), `is required (${issue.expected})`);
      } else {
        schema(memberPath(issue.path), issue.message);
      }
    }
  }
  const rawDomain = (value as { domain?: unknown } | null)?.domain;
  let domain: string | undefined;
  if (typeof rawDomain === 'string') {
    try {
      domain = normalizeDomain(rawDomain);
    } catch (error) {
      schema('domain', error instanceof MvrError ? error.message : String(error));
    }
  }
  if (issuedAt !== undefined) problems.push(...futureDateProblems(value, source, issuedAt));
  if (problems.length > 0 || !parsed.success) return { problems };
  return { audit: { ...parsed.data, domain: domain! } };
}

function memberPath(path: PropertyKey[]): string {
  if (path.length === 0) return '(audit)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}
