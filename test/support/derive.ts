/**
 * One audit and its issue context for the record-derivation tests, and helpers that patch the
 * audit and derive (each derived record is also checked against the record schema) or validate it.
 */

import { type AuditProblem, formatProblem } from '../../core/errors/errors.ts';
import { type Audit, validateAudit } from '../../core/rules/audit.ts';
import { defaultSchemaUrl, deriveRecord, type IssueContext, recordSchema, type UnsignedRecord } from '../../core/rules/record.ts';

export const ctx: IssueContext = {
  issuer: 'verify.example.com',
  schemaUrl: defaultSchemaUrl('verify.example.com'),
  issuedAt: '2026-02-01T00:00:00.000Z',
};

export const baseAudit = {
  domain: 'www.Example.com',
  score: 85,
  sub_scores: { visibility: 70, recommendation_rate: 60, technical_readiness: 90 },
  flags: [] as string[],
  evidence: { ok: true, coverage: 0.8, site_coverage: 0.9, engines_ran: ['alpha', 'beta'], engines_skipped: [], blockers: [] },
  archetype: 'retail',
  first_seen: '2025-06-01T00:00:00Z',
  last_audited_at: '2026-01-15T12:00:00Z',
};

export type Patch = { [K in keyof typeof baseAudit]?: unknown } & { flagged?: unknown; [extra: string]: unknown };

export function auditOf(patch: Patch = {}): Audit {
  const result = validateAudit({ ...baseAudit, ...patch }, 'test.json');
  if (!('audit' in result)) throw new Error(`audit did not validate: ${result.problems.map(formatProblem).join('; ')}`);
  return result.audit;
}

export function derive(patch: Patch = {}): UnsignedRecord {
  const record = deriveRecord(auditOf(patch), ctx);
  recordSchema.parse(record); // every derived record is a valid record
  return record;
}

export function problemsOf(value: unknown, source = 'audits/a.jsonl:3'): AuditProblem[] {
  const result = validateAudit(value, source);
  if (!('problems' in result)) throw new Error('expected problems');
  return result.problems;
}
