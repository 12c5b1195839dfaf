import { hash } from 'node:crypto';

/**
 * Where a domain's record lives inside a build: `ab/<domain>.json`, where `ab` is the first byte
 * of SHA-256(domain) in hex. The path is computed, never listed, so lookups stay one indexed
 * directory entry away (ext4's hashed directories) at any size: 256 shards hold about 39,000
 * files each at 10M domains. Fewer, fuller shards keep the build fast: creating a directory costs
 * as much as writing a record, and 65,536 shards meant one new directory per record in builds
 * under a few hundred thousand. The domain is already normalized (`[a-z0-9.-]`), so it cannot
 * climb out of the shard.
 *
 * Reproduce by hand: `printf %s example.com | sha256sum | cut -c1-2`.
 */
export function recordPath(domain: string): string {
  return `${shardOf(hash('sha256', domain, 'buffer'))}/${domain}.json`;
}

/** The shard of a domain whose SHA-256 is `domainHash` (its first byte in hex): for a caller that hashed the domain already ({@link recordPath}). */
export function shardOf(domainHash: Uint8Array): string {
  return domainHash[0]!.toString(16).padStart(2, '0');
}

/**
 * Whether a path in a build is one of its per-record files ({@link recordPath}): the tree people
 * inspect, which stays in the records folder (a bucket gets the packs instead). A shard's
 * `log.jsonl` beside them is not one.
 */
export const isRecordFile = (path: string): boolean => /^[0-9a-f]{2}\/[^/]+\.json$/.test(path);

/** Name of the symlink inside the records folder that points at the live build. */
export const CURRENT_LINK = 'current';
/** Folder inside the records folder that holds the builds. */
export const BUILDS_DIR = 'builds';
/** Manifest written at the top of every build. */
export const MANIFEST_FILE = 'manifest.json';

/**
 * In object storage (`mvr publish --to s3://BUCKET/PREFIX`): each build under `builds/<id>/`
 * (its manifest, its records, and the key set published with it, as this object), and the
 * object naming the live build, written last.
 */
export const BUILD_KEY_SET_OBJECT = 'merchant-verify-keys.json';
/** In object storage: the log's verifier key beside each logged build's key set, and its tiles under `log/`. */
export const BUILD_LOG_VKEY_OBJECT = 'merchant-verify-log.vkey';
export const BUCKET_LOG_PREFIX = 'log/';
export const LIVE_POINTER_OBJECT = 'live.json';
/**
 * In object storage, beside the live build's manifest: the kept list as it was when that build
 * was published (the records folder's `kept.json`). It sits under the build, not beside
 * `live.json`, so the live pointer and the list it goes with change in one write.
 */
export const BUILD_KEPT_OBJECT = 'kept.json';
/** What a build id may look like (`mvr build` makes `20261101T000000Z-<pid>-<random>`). */
export const BUILD_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The kept builds, newest first (`mvr build --keep N`), in the records folder. */
export const KEPT_FILE = 'kept.json';
/** In each build: one line per record, `{"shard","domain","status","tier","score"}`, in shard then domain order. */
export const INDEX_FILE = 'index.jsonl';
/** In each build: what changed since an earlier kept build, `changes/<that build's id>.jsonl`. */
export const CHANGES_DIR = 'changes';

/**
 * The transparency log: C2SP tiles and the checkpoint under `public/log/` (served at `/log/`),
 * and the log's verifier key beside the key set. In each build, `<shard>/log.jsonl` gives each
 * record's entry index and salt, one line per record in domain order, `{"domain","index","salt"}`
 * (a file name no record can have), and `log-checkpoint` is the checkpoint its proofs are against.
 */
export const LOG_DIR = 'log';
export const LOG_CHECKPOINT = 'checkpoint';
export const LOG_VKEY_PATH = '/.well-known/merchant-verify-log.vkey';
export const SHARD_LOG_FILE = 'log.jsonl';
export const BUILD_CHECKPOINT_FILE = 'log-checkpoint';
/**
 * In a live build, written only by a refresh after a build short of its quorum: the log's newer
 * head, cosigned by the quorum. It holds every entry of the build (the log only grows), so the
 * build's proofs are served against it; `log-checkpoint` stays the build's own.
 */
export const BUILD_SERVED_CHECKPOINT_FILE = 'served-checkpoint';
/**
 * In a build made on a log with entries: the log a publish leaves in a bucket when the build does
 * not go live there, signed ahead by the build (a publish holds no log key): the tiles the build's
 * log gains from one more entry, the log's last entry before the build again, and `checkpoint`.
 * It is never uploaded with the build.
 */
export const BUILD_LOG_IF_NOT_LIVE_DIR = 'log-if-not-live';

/**
 * In each build: the domain map, the sorted SHA-256 hashes of its domains (32 bytes each, no
 * header), and the build statement signed over its root. A domain absent from the map was never
 * audited in that build; one present must have its record, or the answer is UNAVAILABLE.
 */
export const DOMAIN_MAP_FILE = 'domain-map';
/**
 * In each build: the records as packs, `packs/<sha256>.jsonl` (records in map order, one a line;
 * named by the SHA-256 of the pack, which the statement lists), and the pack index, a big-endian
 * u32 a record in map order, the offset just past its line in its pack. Every reader finds a
 * record so: the map gives its index, the index its pack and range.
 */
export const PACKS_DIR = 'packs';
export const PACK_INDEX_FILE = 'pack-index';
export const BUILD_STATEMENT_FILE = 'statement.json';
/**
 * In each build: every compact private answer (`GET /v1/lookup/{bits}/{hex}`), one slot of the
 * statement's `lookup.bucket_bytes` a bucket in bucket order, so an answer is one ranged read.
 * Derived from the domain map alone (the same bytes from the same map), padded, never parsed by
 * the gateway.
 */
export const LOOKUP_ANSWERS_FILE = 'lookup-answers';

/**
 * A mirror (`mvr mirror --to DIR`) is a records folder as `mvr build` makes it, plus: `mirror.json`,
 * naming where it is mirrored from and the record keys it trusted (the key set `mvr serve` and
 * `mvr verify --mirror` pin on it); `public`, a link to `current/public`, each build's own verified
 * key set, log key, checkpoint and the log tiles its statement's proof reads; and `.packs/`, packs
 * being fetched (`<sha256>.part`, continued by a ranged read) or fetched and checked but not yet in
 * a live build (`<sha256>.jsonl`).
 */
export const MIRROR_FILE = 'mirror.json';
export const MIRROR_PUBLIC_DIR = 'public';
export const MIRROR_POOL_DIR = '.packs';
