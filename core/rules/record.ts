import { z } from 'zod';
import { addOneMonth, formatTimestamp, parseTimestamp } from '#shared';
import type { Audit } from './audit.ts';

export const MAX_SCORE = 100;
export const SCHEMA_SUFFIX = '/verification/v1';

const STATUSES = ['verified', 'provisional', 'unverified', 'flagged'] as const;
const TIERS = ['gold', 'silver', 'bronze'] as const;
export type Status = (typeof STATUSES)[number];
export type Tier = (typeof TIERS)[number];

const timestamp = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'UTC timestamp with milliseconds');

/** The verification record. The JSON Schema served at `/schemas/verification/v1` is generated from this. */
export const recordSchema = z
  .object({
    schema: z.string().regex(/^https?:\/\/[^\s]+\/verification\/v1$/, 'an http(s) URL ending in /verification/v1'),
    domain: z.string().min(1),
    status: z.enum(STATUSES),
    tier: z.enum(TIERS).nullable(),
    score: z.number().min(0).max(MAX_SCORE).nullable(),
    max_score: z.literal(MAX_SCORE),
    sub_scores: z.strictObject({
      visibility: z.number().int().min(0).max(100),
      recommendation_rate: z.number().int().min(0).max(100),
      technical_readiness: z.number().int().min(0).max(100),
    }),
    flags: z.array(z.string()),
    evidence: z.strictObject({
      ok: z.boolean(),
      coverage: z.number().min(0).max(1),
      site_coverage: z.number().min(0).max(1),
      engines_ran: z.array(z.string()),
      engines_skipped: z.array(z.string()),
      blockers: z.array(z.union([z.string(), z.record(z.string(), z.unknown())])),
    }),
    archetype: z.string().min(1),
    first_seen: timestamp.nullable(),
    last_audited_at: timestamp.nullable(),
    next_audit_at: timestamp.nullable(),
    issuer: z.string().min(1),
    issued_at: timestamp,
    key_id: z.string().min(1).optional(),
    signature: z
      .string()
      .regex(/^ed25519:[A-Za-z0-9_-]{86}$/)
      .optional(),
  })
  .strict()
  .meta({
    title: 'Merchant verification record',
    description: 'A signed verification record for a merchant domain (merchant-verify, schema v1).',
  });

export type VerificationRecord = z.infer<typeof recordSchema>;
export type UnsignedRecord = Omit<VerificationRecord, 'key_id' | 'signature'>;

/** What every record of one build shares. */
export interface IssueContext {
  issuer: string;
  /** The `schema` URL; ends in `/verification/v1`. */
  schemaUrl: string;
  /** `issued_at`, already formatted: one timestamp per build. */
  issuedAt: string;
}

/** Default schema URL for an issuer: `https://{issuer}/schemas/verification/v1`. */
export function defaultSchemaUrl(issuer: string): string {
  return `https://${issuer}/schemas${SCHEMA_SUFFIX}`;
}

/** gold >= 80, silver >= 50, bronze >= 1, else null; null too for a null score or thin evidence. */
export function tierFor(score: number | null, evidenceOk: boolean): Tier | null {
  if (score === null || !evidenceOk) return null;
  if (score >= 80) return 'gold';
  if (score >= 50) return 'silver';
  if (score >= 1) return 'bronze';
  return null;
}

/** flagged wins; thin evidence downgrades to provisional; otherwise verified. */
export function statusFor(audit: Pick<Audit, 'flagged' | 'evidence'>): Status {
  if (audit.flagged) return 'flagged';
  if (!audit.evidence.ok) return 'provisional';
  return 'verified';
}

/**
 * Derives the unsigned record of a validated audit. Pure: the same
 * audit and context always give the same record.
 */
export function deriveRecord(audit: Audit, ctx: IssueContext): UnsignedRecord {
  const flags = new Set(audit.flags);
  if (!audit.evidence.ok) flags.add('thin_evidence');
  const lastAudited = parseTimestamp(audit.last_audited_at)!;
  return {
    schema: ctx.schemaUrl,
    domain: audit.domain,
    status: statusFor(audit),
    tier: tierFor(audit.score, audit.evidence.ok),
    score: audit.score,
    max_score: MAX_SCORE,
    sub_scores: {
      visibility: Math.round(audit.sub_scores.visibility),
      recommendation_rate: Math.round(audit.sub_scores.recommendation_rate),
      technical_readiness: Math.round(audit.sub_scores.technical_readiness),
    },
    flags: [...flags].sort(),
    evidence: {
      ok: audit.evidence.ok,
      coverage: audit.evidence.coverage,
      site_coverage: audit.evidence.site_coverage,
      engines_ran: audit.evidence.engines_ran,
      engines_skipped: audit.evidence.engines_skipped,
      blockers: audit.evidence.blockers,
    },
    archetype: audit.archetype,
    first_seen: formatTimestamp(parseTimestamp(audit.first_seen)!),
    last_audited_at: formatTimestamp(lastAudited),
    next_audit_at: formatTimestamp(addOneMonth(lastAudited)),
    issuer: ctx.issuer,
    issued_at: ctx.issuedAt,
  };
}

/** The record of a valid domain that was never audited: status unverified, score null, nothing audited. */
export function unverifiedRecord(domain: string, ctx: IssueContext): UnsignedRecord {
  return {
    schema: ctx.schemaUrl,
    domain,
    status: 'unverified',
    tier: null,
    score: null,
    max_score: MAX_SCORE,
    sub_scores: { visibility: 0, recommendation_rate: 0, technical_readiness: 0 },
    flags: [],
    evidence: { ok: false, coverage: 0, site_coverage: 0, engines_ran: [], engines_skipped: [], blockers: [] },
    archetype: 'unknown',
    first_seen: null,
    last_audited_at: null,
    next_audit_at: null,
    issuer: ctx.issuer,
    issued_at: ctx.issuedAt,
  };
}
