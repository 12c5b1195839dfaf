import { canonicalJson, hasLoneSurrogate } from '#shared';

// A record's canonical text, written member by member for the one shape every record has.

/**
 * RFC 8785 text of a derived record, in three parts split where `key_id` and `signature` sort in:
 * the signed text is `head + middle + tail`; the stored text is `head`, the `key_id` member,
 * `middle`, the `signature` member, `tail`. It is the generic canonicalizer's output for this one
 * shape, written out member by member (members in JCS order, strings and numbers by
 * `JSON.stringify`, which is what RFC 8785 prescribes for them): about a tenth of the cost, which
 * matters once per record in a build of millions.
 *
 * Returns `null` for anything that is not exactly that shape with plain values (a missing or
 * extra member, another type, a lone surrogate, a non-finite number, an array or class instance
 * where an object belongs); the caller then uses the generic canonicalizer, which gives the same
 * text or names the problem.
 */
export function recordCanonicalParts(record: object): { head: string; middle: string; tail: string } | null {
  const r = record as Record<string, unknown>;
  const sub = r.sub_scores as Record<string, unknown> | undefined;
  const ev = r.evidence as Record<string, unknown> | undefined;
  if (!isPlain(r, RECORD_MEMBERS) || !isPlain(sub, 3) || !isPlain(ev, 6)) return null;
  plain = true;
  const head =
    `{"archetype":${str(r.archetype)},"domain":${str(r.domain)},` +
    `"evidence":{"blockers":${blockers(ev.blockers)},"coverage":${num(ev.coverage)},"engines_ran":${strings(ev.engines_ran)},` +
    `"engines_skipped":${strings(ev.engines_skipped)},"ok":${bool(ev.ok)},"site_coverage":${num(ev.site_coverage)}},` +
    `"first_seen":${strOrNull(r.first_seen)},"flags":${strings(r.flags)},"issued_at":${str(r.issued_at)},"issuer":${str(r.issuer)}`;
  const middle =
    `,"last_audited_at":${strOrNull(r.last_audited_at)},"max_score":${num(r.max_score)},"next_audit_at":${strOrNull(r.next_audit_at)},` +
    `"schema":${str(r.schema)},"score":${numOrNull(r.score)}`;
  const tail =
    `,"status":${str(r.status)},"sub_scores":{"recommendation_rate":${num(sub.recommendation_rate)},` +
    `"technical_readiness":${num(sub.technical_readiness)},"visibility":${num(sub.visibility)}},"tier":${strOrNull(r.tier)}}`;
  return plain ? { head, middle, tail } : null;
}

/** RFC 8785 text of an unsigned record: {@link recordCanonicalParts} joined, or the generic canonicalizer where it declines. */
export function canonicalRecordText(record: object): string {
  const parts = recordCanonicalParts(record);
  return parts ? parts.head + parts.middle + parts.tail : canonicalJson(record);
}

/** Members of an unsigned record (without `key_id` and `signature`). */
const RECORD_MEMBERS = 15;
/** Cleared by the value writers below when a value is not what the record's shape allows. */
let plain = true;

/** A plain object (as the generic canonicalizer accepts: prototype Object's or none) with this many members. */
function isPlain(value: unknown, members: number): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && Object.keys(value).length === members;
}

/** Characters that JSON escapes, and surrogates (checked for pairs): text without them is quoted as it is. */
const NEEDS_CARE = /["\\\u0000-\u001f\ud800-\udfff]/;

function str(value: unknown): string {
  if (typeof value !== 'string') {
    plain = false;
    return '';
  }
  if (!NEEDS_CARE.test(value)) return `"${value}"`;
  if (hasLoneSurrogate(value)) plain = false;
  return JSON.stringify(value);
}

function strOrNull(value: unknown): string {
  return value === null ? 'null' : str(value);
}

function num(value: unknown): string {
  // ECMAScript's number to string, as JSON.stringify and RFC 8785 (section 3.2.2.3) write numbers.
  if (typeof value === 'number' && Number.isFinite(value)) return `${value}`;
  plain = false;
  return '';
}

function numOrNull(value: unknown): string {
  return value === null ? 'null' : num(value);
}

function bool(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  plain = false;
  return '';
}

function strings(value: unknown): string {
  if (!Array.isArray(value)) {
    plain = false;
    return '';
  }
  let out = '[';
  for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + str(value[i]);
  return `${out}]`;
}

/** Strings, or objects of any JSON (canonicalized generically; rare, and usually none at all). */
function blockers(value: unknown): string {
  if (!Array.isArray(value)) {
    plain = false;
    return '';
  }
  let out = '[';
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    let text = '';
    if (typeof item === 'string') {
      text = str(item);
    } else {
      try {
        text = canonicalJson(item);
      } catch {
        plain = false;
      }
    }
    out += (i === 0 ? '' : ',') + text;
  }
  return `${out}]`;
}
