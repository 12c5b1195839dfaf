import { ReadTooLargeError } from './errors/errors.ts';
import {
  BUILD_CHECKPOINT_FILE,
  BUILD_KEY_SET_OBJECT,
  BUILD_LOG_VKEY_OBJECT,
  BUILD_STATEMENT_FILE,
  CHANGES_DIR,
  DOMAIN_MAP_FILE,
  INDEX_FILE,
  KEPT_FILE,
  LIVE_POINTER_OBJECT,
  LOG_CHECKPOINT,
  LOOKUP_ANSWERS_FILE,
  MANIFEST_FILE,
  PACK_INDEX_FILE,
  PACKS_DIR,
  SHARD_LOG_FILE,
} from './layout.ts';

// The service's limits. The read limits (READ_LIMITS: bytes and a total deadline for each kind of
// file read from a store or a peer) are the shared package's one table, which the verifier package
// reads too; past either bound a store's read fails typed (ReadTooLargeError, ReadDeadlineError)
// and a client's is FETCH_FAILED (AnswerTooLargeError). docs/limits.md lists every table here.

import { READ_LIMITS, type ReadKind } from '#shared';

export { READ_LIMITS, type ReadKind, type ReadLimit } from '#shared';

const MiB = 1024 * 1024;

/** What the public log routes keep in memory and may ask of the store at once. */
export const PUBLIC_LIMITS = {
  /** Bytes of immutable log files (full tiles, a build's log key) kept in memory, least recently used dropped first. */
  logCacheBytes: 16 * MiB,
  /** How long the log's checkpoint and partial tiles are served from memory before they are read again (ms). */
  logFreshMs: 1_000,
  /** Unauthenticated requests (the log, its key) handled at once; more wait their turn. */
  concurrent: 16,
  /** Unauthenticated requests waiting for a turn; past that they are answered 429 at once. */
  waiting: 256,
} as const;

/**
 * What the gateway keeps in memory to answer faster, each bounded by bytes (never by a count of
 * entries, whose size a build's shape decides) and each emptied when the build it was made for
 * is no longer live. The verified records' bound is `--cache-mb`; the log's files are under
 * PUBLIC_LIMITS.logCacheBytes.
 */
export const CACHE_LIMITS = {
  /** Bytes of compact answers (`/v1/lookup/{bits}/{hex}`) kept for the live build as read from its answers file; least recently used dropped first. */
  compactAnswerBytes: 16 * MiB,
} as const;

/**
 * What one API key may take of a gateway's answers. A request costs one unit of the key's quota
 * (`--rate-limit`, units a minute), and a mirror file one unit per `quotaUnitBytes` it sends,
 * rounded up, charged before its first byte from the length of the file or range asked for. A
 * key holds at most `streamsPerKey` streamed answers (mirror files) at once in one gateway
 * process. A client must take each chunk written to it (at most `writeChunkBytes`; a whole small
 * answer is one write) within `writeIdleMs`, or its connection is cut: a slow reader costs at most
 * one chunk beside the socket's own buffer, for a bounded time.
 */
export const ANSWER_LIMITS = {
  /** Bytes of a mirror file one quota unit buys; a lookup's record is at most 64 KiB, so one unit a request never charges it less a byte. */
  quotaUnitBytes: 1 * MiB,
  /** Streamed answers one key may have open at once in one gateway process (`--streams-per-key`). */
  streamsPerKey: 8,
  /** Bytes of a streamed answer written at once, and read from the store at once (a pack's range). */
  writeChunkBytes: READ_LIMITS.packRange.bytes,
  /** How long a client has to take a write (a chunk, an answer) before its connection is cut (ms; `MVR_WRITE_IDLE_MS`). */
  writeIdleMs: 30_000,
} as const;

/** The quota units an answer of `bytes` bytes costs: one per started `quotaUnitBytes`, and at least the one every request costs. */
export function quotaUnitsOf(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / ANSWER_LIMITS.quotaUnitBytes));
}

/**
 * What the gateway spends looking up an API key id its snapshot of the keys does not hold (a key
 * made a moment ago, or a made-up one): one look at the key table per id however many
 * requests ask (coalesced), taken only after the request's address paid for it, and an id found
 * in no table refused from memory for a while.
 */
export const KEY_LOOKUP_LIMITS = {
  /** How long an id the table did not hold is refused without a new look (ms); any reload that finds the keys changed (a key created) forgets every such id at once. */
  unknownIdTtlMs: 5_000,
  /** Ids remembered as unknown at most; the oldest is forgotten first. */
  unknownIds: 10_000,
} as const;

/**
 * How much trust work one key set may ask for: at most `endorsements` endorsements (more refuse
 * it, INVALID_KEY_SET, before a signature is checked; so at most that many checks), and a key at
 * most `chainLinks` endorsements from a pinned key. Defined by the verifier package, which every
 * reader of a key set shares and which cannot import this table; listed here with the rest.
 */
export { TRUST_LIMITS } from '#shared';

/** The kinds of the files a build, a bucket or a log names the same everywhere (core/layout.ts). */
const BY_NAME = new Map<string, ReadKind>([
  [MANIFEST_FILE, 'manifest'],
  [BUILD_STATEMENT_FILE, 'statement'],
  [DOMAIN_MAP_FILE, 'domainMap'],
  [BUILD_KEY_SET_OBJECT, 'keySet'],
  [KEPT_FILE, 'keptList'],
  [LIVE_POINTER_OBJECT, 'livePointer'],
  [LOG_CHECKPOINT, 'checkpoint'],
  [BUILD_CHECKPOINT_FILE, 'checkpoint'],
  [BUILD_LOG_VKEY_OBJECT, 'logVkey'],
  [SHARD_LOG_FILE, 'shardLog'],
  [INDEX_FILE, 'index'],
  [PACK_INDEX_FILE, 'packIndex'],
  [LOOKUP_ANSWERS_FILE, 'lookupAnswer'],
]);

/** A pack, `packs/<sha256>.jsonl`: read a record's range at a time. */
const PACK = new RegExp(`(^|/)${PACKS_DIR}/[0-9a-f]{64}\\.jsonl$`);

/** A change feed, `changes/<build>.jsonl`. */
const CHANGES_FEED = new RegExp(`(^|/)${CHANGES_DIR}/[^/]+\\.jsonl$`);

/**
 * The kind of file a path inside a build, a log or a bucket names, by its name: `builds/<id>/`
 * and `log/` prefixes are looked through. A name the table does not know is `other`.
 */
export function readKindOf(path: string): ReadKind {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (/(^|\/)tile\//.test(path)) return 'tile';
  const named = BY_NAME.get(name);
  if (named) return named;
  if (CHANGES_FEED.test(path)) return 'changes';
  if (PACK.test(path)) return 'packRange';
  if (/(^|\/)[0-9a-f]{2}\/[^/]+\.json$/.test(path)) return 'record';
  return 'other';
}

/** The limits of one read: the kind's, its deadline shortened to `deadlineMs` when given (a setting tests shorten). */
export function readLimitOf(path: string, deadlineMs?: number): { kind: ReadKind; bytes: number; deadlineMs: number } {
  const kind = readKindOf(path);
  const limit = READ_LIMITS[kind];
  return { kind, bytes: limit.bytes, deadlineMs: deadlineMs === undefined ? limit.deadlineMs : Math.min(deadlineMs, limit.deadlineMs) };
}

/** A ranged read of `length` bytes of `path`, refused before it is asked for (ReadTooLargeError) when its kind may not have that many. */
export function checkRangeLimit(path: string, length: number): void {
  const { kind, bytes } = readLimitOf(path);
  if (length > bytes) throw new ReadTooLargeError(kind, bytes);
}
