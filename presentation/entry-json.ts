import type { CompactVerification, EntryVerdict } from '@merchant-verify/verifier';
import { unicodeDomain } from '../core/rules/domain.ts';
import { witnessedJson } from '../core/rules/witnessed.ts';
import type { TrustJson } from './trust-report.ts';
import { entryJson } from './verification-json.ts';

// How every edge (`mvr verify --private`, the MCP tools) says a verdict that came from a domain's
// map entry: a compact private answer proves the entry (status, tier, score, next audit and the
// record's hash), not the record, which was never fetched. The JSON keeps the verification's one
// shape (verdict first, one member a step, claims last) so a caller reads it as it reads a plain one.

/** What a private caller is told about the record it did not fetch. */
export const RECORD_NOT_FETCHED =
  "the record itself was not fetched (a private lookup proves its map entry, which holds the record's hash): get it from a plain lookup, which names the domain, or a mirror, and check it with recordMatchesEntry";

/**
 * A verdict from a proven map entry as JSON, in the verification's shape: `signature` is null (no
 * record, so no record signature was checked), `entry` is the entry's step (the record's hash,
 * the entry's bytes, `record_fetched: false`), `statement` the build statement's (signed, and its
 * entry in the log when checked), `log` that entry, `witnesses` with a policy, `current` when the
 * statement was its checkpoint's last entry, `claims` what the entry says. `v.entry` must be set.
 */
export function entryVerificationJson(
  v: CompactVerification & { entry: EntryVerdict },
  policy: boolean,
  trust: TrustJson | null,
  now: number = Date.now(),
): Record<string, unknown> {
  const e = v.entry;
  const s = v.statement?.valid ? v.statement : null;
  const logged = s?.statementLog;
  const issued = s ? Date.parse(s.issuedAt) : Number.NaN;
  const seconds = (t: number) => Math.max(0, Math.floor((now - t) / 1000));
  const newest = v.witnessed?.witnessedAt ?? null;
  return {
    valid: v.code === null,
    code: v.code,
    message: v.message,
    domain: e.domain,
    domain_unicode: unicodeDomain(e.domain),
    signature: null,
    absence: null,
    entry: {
      valid: true,
      code: null,
      message: null,
      record_hash: e.record_hash,
      entry: e.entry,
      record_fetched: false,
      note: RECORD_NOT_FETCHED,
    },
    statement: s && {
      valid: true,
      code: null,
      message: null,
      build: s.build,
      issued_at: s.issuedAt,
      key_id: s.keyId,
      log: logged ? entryJson(logged) : null,
    },
    log: logged ? entryJson(logged) : v.code === 'STATEMENT_NOT_LOGGED' ? { valid: false, code: v.code, message: v.message } : null,
    witnesses: !policy
      ? null
      : v.witnessed
        ? { valid: true, code: null, message: null, ...witnessedJson(v.witnessed) }
        : { valid: false, code: 'NOT_WITNESSED', message: 'no proof whose checkpoint the policy could check' },
    current: logged !== undefined && logged.index === logged.checkpoint.size - 1 ? true : null,
    age: {
      issued_at: s?.issuedAt ?? null,
      build_age_seconds: Number.isNaN(issued) ? null : seconds(issued),
      newest_cosignature_at: newest === null ? null : new Date(newest).toISOString(),
      newest_cosignature_age_seconds: newest === null ? null : seconds(newest),
    },
    // An entry holds the next audit, not the last: the record's own dates stay with the record.
    staleness: { state: e.next_audit_at !== null && Date.parse(e.next_audit_at) < now ? 'overdue' : 'not_checked' },
    trust,
    claims: { status: e.status, tier: e.tier, score: e.score, next_audit_at: e.next_audit_at, key_id: null },
  };
}

/** The text lines of an entry verdict's own steps (after the verdict line), as `mvr verify --private` prints them. */
export function entryLines(json: Record<string, unknown>): string[] {
  const claims = json.claims as { status: string; tier: string | null; score: number | null; next_audit_at: string | null };
  const entry = json.entry as { record_hash: string };
  const statement = json.statement as { build: string; issued_at: string; key_id: string } | null;
  const log = json.log as { valid: boolean; index?: number; tree_size?: number; origin?: string; code?: string; message?: string } | null;
  return [
    `  status     ${claims.status}${claims.tier ? `, tier ${claims.tier}` : ''}, score ${claims.score === null ? 'none' : `${claims.score}/100`}`,
    `  audited    next audit ${claims.next_audit_at ? claims.next_audit_at.slice(0, 10) : '-'}${(json.staleness as { state: string }).state === 'overdue' ? ' (overdue)' : ''}`,
    ...(statement ? [`  statement  build ${statement.build} (issued ${statement.issued_at}), signed (key ${statement.key_id})`] : []),
    `  entry      in the build's domain map; record hash ${entry.record_hash}`,
    ...(log
      ? [
          `  log        ${log.valid ? `build statement included: entry ${log.index} of ${log.tree_size} in ${log.origin}` : `NOT PROVEN: ${log.code} (${log.message})`}`,
        ]
      : []),
    '  record     not fetched (only its hash is proven): a plain lookup, which names the domain, or a mirror gives it; check it with recordMatchesEntry',
  ];
}

/** The codes by which a compact answer itself fails (its shape, bucket, padding, completeness, an entry no record has); any other is the statement's. */
const ANSWER_FAILURES = new Set([
  'MALFORMED_PREFIX_ANSWER',
  'PREFIX_MISMATCH',
  'PREFIX_TOO_LONG',
  'PADDING_MISMATCH',
  'INCOMPLETE_PREFIX_ANSWER',
  'RECORD_NOT_IN_MAP',
]);

/**
 * A compact answer whose build statement did not hold (not signed by a trusted key, not in the log,
 * not witnessed) as a verdict in the verification's shape: the `statement` step failed with its
 * code, `log` too when the log was checked, `witnesses` with a policy, nothing claimed. null when
 * the answer itself failed (its shape, bucket, padding or completeness): that is no verdict but a
 * broken answer, which each edge reports as its error.
 */
export function statementFailureJson(
  v: CompactVerification,
  domain: string,
  policy: boolean,
  withLog: boolean,
  trust: TrustJson | null,
): Record<string, unknown> | null {
  if (v.code === null || v.entry || v.verification || ANSWER_FAILURES.has(v.code)) return null;
  const failed = { valid: false, code: v.code, message: v.message };
  return {
    valid: false,
    code: v.code,
    message: v.message,
    domain,
    domain_unicode: unicodeDomain(domain),
    signature: null,
    absence: null,
    entry: null,
    statement: failed,
    log: withLog || policy ? failed : null,
    witnesses: policy ? failed : null,
    current: null,
    age: { issued_at: null, build_age_seconds: null, newest_cosignature_at: null, newest_cosignature_age_seconds: null },
    staleness: { state: 'not_checked' },
    trust,
    claims: { status: null, tier: null, score: null, next_audit_at: null, key_id: null },
  };
}
