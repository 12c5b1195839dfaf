/**
 * The one table of what merchant-verify accepts from a store (an http(s) origin, a bucket), a
 * peer (a gateway asked by `mvr verify`, `mvr log`, `mvr mcp` or the verifier package's
 * `gatewaySource`, a witness) or a caller's request body: how many bytes each kind may have and
 * how long one read of it may take in all, retries included. The service and the verifier read it
 * here alike; past either bound a read fails typed, and what was served before stays served.
 * docs/limits.md lists this table for operators (a test keeps the two equal).
 */

const KiB = 1024;
const MiB = 1024 * KiB;

/** The kinds of file read from a store, each with its size limit (bytes) and its total deadline (ms). */
export const READ_LIMITS = {
  /** `ab/<domain>.json`: what a build may sign (core/files.ts); the tree kept for people to read, not read by the service. */
  record: { bytes: 64 * KiB, deadlineMs: 10_000 },
  /** `packs/<sha256>.jsonl`, read a range at a time: a record's (at most the 64 KiB a record may have, asked for no more) or a mirror's chunk of 256 KiB. */
  packRange: { bytes: 256 * KiB, deadlineMs: 10_000 },
  /** `pack-index`: 4 bytes a record, so 16M records; read whole once per live build. */
  packIndex: { bytes: 64 * MiB, deadlineMs: 60_000 },
  /** `manifest.json`: counts, key id, log indexes. */
  manifest: { bytes: 1 * MiB, deadlineMs: 10_000 },
  /** `statement.json`: one signed statement. */
  statement: { bytes: 64 * KiB, deadlineMs: 10_000 },
  /** `domain-map`: 82 bytes a domain (a v2 entry; 32 in a v1 map), so more than the 16M records a pack index holds. */
  domainMap: { bytes: 1536 * MiB, deadlineMs: 300_000 },
  /** The key set published with a build: retired keys stay listed, each a few hundred bytes. */
  keySet: { bytes: 1 * MiB, deadlineMs: 10_000 },
  /** `kept.json`: the kept builds. */
  keptList: { bytes: 1 * MiB, deadlineMs: 10_000 },
  /** `live.json`: the bucket's pointer to its live build. */
  livePointer: { bytes: 64 * KiB, deadlineMs: 10_000 },
  /** `checkpoint`, `log-checkpoint`: a signed note with its cosignatures. */
  checkpoint: { bytes: 64 * KiB, deadlineMs: 10_000 },
  /** `tile/...`: 256 hashes of 32 bytes, or 256 entries with their length prefixes. */
  tile: { bytes: 64 * KiB, deadlineMs: 10_000 },
  /** The log's verifier key, one line. */
  logVkey: { bytes: 4 * KiB, deadlineMs: 10_000 },
  /** `<shard>/log.jsonl`: a shard's entry indexes and salts (about 40,000 lines at 10M domains). */
  shardLog: { bytes: 32 * MiB, deadlineMs: 60_000 },
  /** `index.jsonl`: one line a record, read whole only by `mvr pull`. */
  index: { bytes: 2048 * MiB, deadlineMs: 600_000 },
  /** `changes/<build>.jsonl`: read a page at a time (a ranged read of 256 KiB). */
  changes: { bytes: 1 * MiB, deadlineMs: 10_000 },
  /** What `mvr verify`, `mvr log` and `mvr mcp` take from a gateway in one answer (a record, a proof, a page of history). */
  gatewayAnswer: { bytes: 4 * MiB, deadlineMs: 30_000 },
  /** A gateway's Oblivious HTTP key configurations (`application/ohttp-keys`): about 45 bytes each. */
  ohttpKeys: { bytes: 4 * KiB, deadlineMs: 10_000 },
  /** A gateway's answer to `GET /v1/verify` for the verifier package (`gatewaySource`): a record, at most the 64 KiB a record may have. */
  answer: { bytes: 64 * KiB, deadlineMs: 10_000 },
  /** An absence proof (`GET /v1/absence`): the build statement, its pack list included, and two Merkle paths. */
  absence: { bytes: 1 * MiB, deadlineMs: 10_000 },
  /** A record's C2SP tlog-proof (`GET /v1/proof`): a checkpoint with its cosignatures and a path of at most 63 hashes. */
  proof: { bytes: 64 * KiB, deadlineMs: 10_000 },
  /** An offline bundle (`GET /v1/bundle`): a record and its absence proof or map path, and a statement proof. */
  bundle: { bytes: 2 * MiB, deadlineMs: 10_000 },
  /** `GET /v1/lookup`: the live build's statement (its pack list included) and its log proof, which a private client reads first. */
  lookupStatement: { bytes: 1 * MiB, deadlineMs: 10_000 },
  /** A compact answer (`GET /v1/lookup/{bits}/{hex}`): one size a build, at most 32 KiB at 10M domains. */
  compact: { bytes: 64 * KiB, deadlineMs: 10_000 },
  /** A request body a gateway (`POST /mcp`, `POST /v1/verify/batch`) or a witness (add-checkpoint) takes; only its size applies, the servers' own request timeouts bound its time. */
  requestBody: { bytes: 64 * KiB, deadlineMs: 30_000 },
  /** A witness's answer to add-checkpoint: cosignature lines or a size, a few hundred bytes. */
  witnessAnswer: { bytes: 16 * KiB, deadlineMs: 10_000 },
  /** `lookup-answers`, read one compact answer at a time: every answer of a build is one size, at most 32 KiB at 10M domains. */
  lookupAnswer: { bytes: 64 * KiB, deadlineMs: 10_000 },
  /** Anything else: an error body, a file this table does not name. */
  other: { bytes: 1 * MiB, deadlineMs: 10_000 },
} as const satisfies Record<string, { bytes: number; deadlineMs: number }>;

export type ReadKind = keyof typeof READ_LIMITS;

/** The two bounds of one read. */
export interface ReadLimit {
  readonly bytes: number;
  readonly deadlineMs: number;
}
