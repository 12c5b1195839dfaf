/**
 * A leaf of a v2 domain map: one fixed-size entry a domain, so the map commits to every record of
 * its build and not only to which domains have one. A v1 map's leaf is the domain hash alone, and
 * a record replaced by the same domain's record of another build (same key, valid signature) still
 * matched it; an entry names the record's bytes, so nothing else matches it.
 *
 * | bytes | member |
 * |---|---|
 * | 0-31 | `domain_hash`: SHA-256 of the UTF-8 normalized domain (the sort key) |
 * | 32-63 | `record_hash`: SHA-256 of the record's exact bytes (its RFC 8785 canonical JSON, signature included) |
 * | 64 | `status`: 1 verified, 2 provisional, 3 flagged |
 * | 65 | `tier`: 0 none, 1 bronze, 2 silver, 3 gold |
 * | 66-73 | `score`: IEEE 754 binary64; -1 for a null score |
 * | 74-81 | `next_audit_at`: milliseconds since the Unix epoch, signed 64-bit; the smallest one for null |
 *
 * Integers big-endian. A map's leaves are sorted by their first 32 bytes either way. Nothing here
 * imports `node:`: the build encodes entries with the code a verifier checks them with.
 */
import { canonicalBytes } from './canonical.ts';
import { parseTimestamp } from './time.ts';
import type { Sha256 } from './tlog/merkle.ts';

/** Bytes of a v1 leaf: the domain hash alone. */
export const HASH_LEAF_SIZE = 32;
/** Bytes of a v2 leaf: a map entry. */
export const ENTRY_SIZE = 82;

const STATUS_CODES = { verified: 1, provisional: 2, flagged: 3 } as const;
const TIER_CODES = { bronze: 1, silver: 2, gold: 3 } as const;
/** `next_audit_at` of a record without one: no millisecond a timestamp can name. */
const NO_NEXT_AUDIT = -(2n ** 63n);

/** The byte ranges of an entry's members, in order; a mismatch is named by the first that differs. */
const MEMBERS = [
  ['domain_hash', 0, 32],
  ['record_hash', 32, 64],
  ['status', 64, 65],
  ['tier', 65, 66],
  ['score', 66, 74],
  ['next_audit_at', 74, 82],
] as const;

export type EntryStatus = keyof typeof STATUS_CODES;
export type EntryTier = keyof typeof TIER_CODES;

/** A v2 map entry, decoded. */
export interface MapEntry {
  domainHash: Uint8Array;
  recordHash: Uint8Array;
  status: EntryStatus;
  tier: EntryTier | null;
  score: number | null;
  /** Epoch milliseconds, null when the record names no next audit. */
  nextAuditAt: number | null;
}

/**
 * The entry of an audited record: from its fields (`domain`, `status`, `tier`, `score`,
 * `next_audit_at`) and its exact bytes. A string saying which field cannot be encoded when the
 * record is not one a map holds (a never-audited record has no entry).
 *
 * @example
 *   const entry = encodeMapEntry(sha256, record, canonicalBytes(record)); // 82 bytes
 */
export function encodeMapEntry(sha256: Sha256, record: unknown, bytes: Uint8Array): Uint8Array | string {
  if (typeof record !== 'object' || record === null) return 'the record is not a JSON object';
  const { domain, status, tier, score, next_audit_at: next } = record as Record<string, unknown>;
  if (typeof domain !== 'string') return 'domain: not a string';
  if (typeof status !== 'string' || !Object.hasOwn(STATUS_CODES, status))
    return `status: ${JSON.stringify(status)} is not one a map entry holds (verified, provisional, flagged)`;
  if (tier !== null && (typeof tier !== 'string' || !Object.hasOwn(TIER_CODES, tier)))
    return `tier: ${JSON.stringify(tier)} is not bronze, silver, gold or null`;
  if (score !== null && (typeof score !== 'number' || !Number.isFinite(score) || score < 0))
    return 'score: not a number of 0 or more, nor null';
  const nextMs = next === null ? null : typeof next === 'string' ? parseTimestamp(next) : null;
  if (next !== null && nextMs === null) return 'next_audit_at: not a timestamp, nor null';
  const entry = new Uint8Array(ENTRY_SIZE);
  const view = new DataView(entry.buffer);
  entry.set(sha256(new TextEncoder().encode(domain)), 0);
  entry.set(sha256(bytes), 32);
  entry[64] = STATUS_CODES[status as EntryStatus];
  entry[65] = tier === null ? 0 : TIER_CODES[tier as EntryTier];
  // + 0: a -0 score is 0, as canonical JSON writes it, so an entry never tells the two apart.
  view.setFloat64(66, score === null ? -1 : (score as number) + 0);
  view.setBigInt64(74, nextMs === null ? NO_NEXT_AUDIT : BigInt(nextMs));
  return entry;
}

/** An entry's members; null when it is not 82 bytes or a code in it is none of the table's. */
export function decodeMapEntry(entry: Uint8Array): MapEntry | null {
  if (entry.length !== ENTRY_SIZE) return null;
  const view = new DataView(entry.buffer, entry.byteOffset, entry.byteLength);
  const status = codeName(STATUS_CODES, entry[64]!);
  const tier = entry[65] === 0 ? null : codeName(TIER_CODES, entry[65]!);
  if (status === undefined || tier === undefined) return null;
  const score = view.getFloat64(66);
  const next = view.getBigInt64(74);
  if (!(score === -1 || (Number.isFinite(score) && score >= 0))) return null;
  return {
    domainHash: entry.slice(0, 32),
    recordHash: entry.slice(32, 64),
    status,
    tier,
    score: score === -1 ? null : score,
    nextAuditAt: next === NO_NEXT_AUDIT ? null : Number(next),
  };
}

function codeName<K extends string>(codes: Record<K, number>, code: number): K | undefined {
  return (Object.keys(codes) as K[]).find((k) => codes[k] === code);
}

/**
 * Whether a record is the one an entry commits to: null when it is, else why not, naming the first
 * member that differs (`record_hash` for any other bytes: an older record of the same domain, a
 * record edited or re-signed). `bytes` are the record's exact bytes as served; without them, its
 * canonical JSON (what the build writes and hashes).
 */
export function entryMismatch(sha256: Sha256, entry: Uint8Array, record: unknown, bytes?: Uint8Array): string | null {
  if (entry.length !== ENTRY_SIZE) return `the map's entry has ${entry.length} bytes, not ${ENTRY_SIZE}`;
  let own: Uint8Array | string;
  try {
    own = encodeMapEntry(sha256, record, bytes ?? canonicalBytes(record));
  } catch {
    own = 'the record is not canonical JSON';
  }
  if (typeof own === 'string') return `the record has no map entry: ${own}`;
  for (const [name, from, to] of MEMBERS)
    for (let i = from; i < to; i++) if (own[i] !== entry[i]) return `its ${name} is not the one its build's map commits to`;
  return null;
}
