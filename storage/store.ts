import { StoreNotPublishedError } from '../core/errors.ts';
import type { KeptBuild } from './kept-builds.ts';
import type { KeySetOrigin } from './key-set-source.ts';

/** For health: what a store serves and whether it is reachable. */
export interface StoreState {
  ok: boolean;
  /** The live build (its id, its folder, or the origin's manifest); null while there is none. */
  build: string | null;
  error: string | null;
}

/** A build a store found live and does not serve yet. */
export interface FoundBuild {
  /** What `generation()` will be while it is served. */
  generation: string;
  /** Its id, when the store names one. */
  build: string | null;
  /** A file of it beside its records (its domain map, its statement); null when it has none. */
  readFile(name: string): Promise<Buffer | null>;
  /** The key set it would be served with (a bucket's travels with the build). */
  keySet: KeySetOrigin;
  /**
   * Makes it the build the store serves. Synchronous, so whoever checked it installs what it
   * checked and the store swaps in one step: no request sees the new build with the old checks.
   */
  take(): void;
}

/**
 * Decides whether a found build is served, by calling `found.take()` or not. A build not taken
 * leaves a folder or bucket serving the build it had (none at first); an origin serves one build,
 * so it then serves none.
 */
export type BuildAcceptance = (found: FoundBuild) => Promise<void>;

/** Every found build taken as it is: the default of a store nobody checks builds for. */
export const takeEveryBuild: BuildAcceptance = async (found) => found.take();

/**
 * Where builds are stored: a records folder (`storage/folder.ts`), an http(s) origin serving one
 * build's folder (`storage/http-origin.ts`) or a bucket (`storage/s3/`). Every backend answers
 * the same questions; nothing outside storage/ knows which one it has (open one with
 * `openStore`). Paths are inside a build (`manifest.json`, `pack-index`, `packs/<sha256>.jsonl`,
 * `changes/<id>.jsonl`); what the bytes mean is decided by the services that read them. Records
 * are read only as ranges of their packs: the per-record tree a folder build also has is for
 * people to inspect, and no store reads it.
 *
 * Fail closed: `null` means "the store answered, and there is no such file". A store that cannot
 * be read throws STORE_UNAVAILABLE, never null: "we could not look" is not "never audited".
 * A store that cannot answer a question at all throws its typed error, worded once
 * (`NoBuildHistoryError`, `NoLogError`; `StoreNotPublishedError` from {@link publishedBuildsOf}).
 */
export interface Store {
  /** Where it is, for messages. */
  readonly name: string;

  // The live build.
  /** Re-checks which build is live; cheap, called on a timer and after a failed verification. A build found live is served only once accepted (see {@link acceptBuildsWith}). */
  refresh(): Promise<void>;
  /** From now on, a build found live is served only when `accept` takes it; by default every build is taken. */
  acceptBuildsWith(accept: BuildAcceptance): void;
  /** Identifies the live build as last refreshed ('' while there is none); verified bytes are cached per generation. */
  generation(): string;
  /** The live build's id, when the store names one (null for a copy of one build or an origin). */
  liveBuild(): string | null;
  /** For health: what is being served and whether it is reachable. */
  describe(): StoreState;
  /**
   * At most `length` bytes of a file of the live build from byte `start` (fewer at its end; a
   * record's range of a pack), only from a regular file or an object's range, within the limits of
   * its kind (core/limits.ts); UNAVAILABLE when the file cannot hold a record (a FIFO, a folder, an
   * origin that ignores the range). Null when there is no such file.
   */
  readLiveRange(name: string, start: number, length: number): Promise<Buffer | null>;
  /** A file of the live build beside its records (its domain map, its statement); null when it has none. */
  readLiveFile(name: string): Promise<Buffer | null>;
  /** The key set published with the live build (a bucket), or the public folder's key set file. */
  keySet(): KeySetOrigin;

  // Kept builds (`mvr build --keep`); NoBuildHistoryError from a store that keeps none.
  /** Changes when the kept list may have changed under the same live build; it is read again only then. */
  keptVersion(): Promise<string>;
  /** The kept builds, newest first, the live one first (see `keptBuilds`). */
  keptBuilds(): Promise<KeptBuild[]>;
  /** A file of a kept build, or null when there is no such file. */
  readFile(build: string, path: string): Promise<Buffer | null>;
  /** At most `length` bytes of a build's file from byte `start` (fewer at its end; the change feed is paged so, a kept build's records are read so from its packs), as {@link readLiveRange}; null when there is none. */
  readRange(build: string, path: string, start: number, length: number): Promise<Buffer | null>;
  /** The length in bytes of a build's file, without reading it (a file too large to hold is then read a range at a time), or null when there is none. */
  fileSize(build: string, path: string): Promise<number | null>;

  // The transparency log's public files; NoLogError from a store that keeps no log.
  /** The build whose records the log proves (the live build as the records are served from it). */
  logBuild(): Promise<string>;
  /** The log's `checkpoint` or a tile (`tile/...`); null when there is none. */
  logFile(path: string): Promise<Buffer | null>;
  /** The log's verifier key in note form; null when there is none. */
  logVkey(): Promise<Buffer | null>;

  /** Writing builds into the store (`mvr publish`) and pulling them out (`mvr pull`): only a store builds are published to has it (see {@link publishedBuildsOf}). */
  published?(): PublishedBuilds;
  /** Releases connections, for stores that hold any; closing twice is a no-op. */
  close(): Promise<void>;
}

/**
 * What `mvr publish` writes and `mvr pull` reads of a store builds are published to. Objects
 * of a build never change once written; `putLive` is the one write that makes a build live, so a
 * reader sees the old build or the new one, never a mix.
 */
export interface PublishedBuilds {
  /** The build the store names live now, read afresh; null when nothing is published yet. */
  liveNow(): Promise<string | null>;
  /** Whether a build is complete in the store (its manifest, written last, is there). */
  hasBuild(build: string): Promise<boolean>;
  putBuildFile(build: string, path: string, body: Buffer, contentType?: string): Promise<void>;
  /** Every file of a build the store holds, by path in the build, with its length and ETag: how a publish run again finds what is up already. */
  buildFileStates(build: string): Promise<Map<string, StoredFile>>;
  /** A build file too large for one request, in parts read as each is sent; `slot` bounds the requests in flight. */
  putBuildFileInParts(build: string, path: string, source: PartSource, contentType: string, slot: Slot): Promise<void>;
  /** A tile of the log (`tile/...`); immutable, so written before the checkpoint that covers it goes live. */
  putLogFile(path: string, body: Buffer): Promise<void>;
  /** Every tile of the log the store holds (`tile/...`), with its length. */
  logTileStates(): Promise<Map<string, StoredFile>>;
  /**
   * The log's head (`log/checkpoint`): the newest checkpoint sent to a witness or published, which
   * the next build extends. Written before the first witness request, so a publish short of its
   * quorum still leaves it; it may be newer than the live build's own checkpoint. Null before any.
   */
  logHead(): Promise<Buffer | null>;
  putLogHead(note: Buffer): Promise<void>;
  /** Names `build` live: written last. `pointer` is the record of the publication. */
  putLive(pointer: { build: string; published_at: string; records: number | null }): Promise<void>;
}

/** An object as a store holds it: its length and ETag (the MD5 of its bytes, or of its parts' MD5s and their count). */
export interface StoredFile {
  bytes: number;
  etag: string;
}

/** The rules of an upload in parts (S3's, which the S3-compatible servers follow): each part 5 MiB at least (but the last) and 5 GiB at most, 10,000 parts at most. */
export const MULTIPART_RULES = { minPartBytes: 5 * 1024 ** 2, maxPartBytes: 5 * 1024 ** 3, maxParts: 10_000 } as const;

/** The part size for an object of `bytes`: `partBytes`, or larger when it would take more than 10,000 parts. */
export const partSizeFor = (bytes: number, partBytes: number): number => Math.max(partBytes, Math.ceil(bytes / MULTIPART_RULES.maxParts));

/** An object to upload in parts: its length, its part size, and a reader of any range of it (read as each part is sent). */
export interface PartSource {
  bytes: number;
  partBytes: number;
  read(start: number, length: number): Promise<Buffer>;
}

/** Runs a request when a slot is free: how a caller bounds the requests in flight across its uploads. */
export type Slot = <T>(request: () => Promise<T>) => Promise<T>;

/** What `mvr publish` and `mvr pull` use of a store; a usage error, naming `flag`, for a store builds are not published to. */
export function publishedBuildsOf(store: Store, flag: string): PublishedBuilds {
  if (!store.published) throw new StoreNotPublishedError(flag, store.name);
  return store.published();
}
