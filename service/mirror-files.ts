import type { BuildStatement } from '#shared';
import { BuildNotFoundError, StoreUnavailableError } from '../core/errors/errors.ts';
import { strongEtag } from '../core/etag.ts';
import {
  BUILD_CHECKPOINT_FILE,
  BUILD_SERVED_CHECKPOINT_FILE,
  BUILD_STATEMENT_FILE,
  DOMAIN_MAP_FILE,
  INDEX_FILE,
  MANIFEST_FILE,
  PACK_INDEX_FILE,
  PACKS_DIR,
  SHARD_LOG_FILE,
} from '../core/layout.ts';
import { ANSWER_LIMITS } from '../core/limits.ts';
import type { BuildHistory } from './history.ts';
import type { RecordsService } from './records.ts';

const JSON_TYPE = 'application/json';
const BYTES_TYPE = 'application/octet-stream';

/**
 * The files of a build a mirror fetches by name, each with its media type and whether it is read
 * whole: the small ones (a signed statement, a manifest, a checkpoint with its cosignatures, all
 * within the limits table's 1 MiB) are; the domain map, the pack index, the index and the packs
 * are read a range at a time, never held whole.
 */
const NAMED: Record<string, { type: string; whole: boolean }> = {
  [BUILD_STATEMENT_FILE]: { type: JSON_TYPE, whole: true },
  [MANIFEST_FILE]: { type: JSON_TYPE, whole: true },
  [BUILD_CHECKPOINT_FILE]: { type: BYTES_TYPE, whole: true },
  [BUILD_SERVED_CHECKPOINT_FILE]: { type: BYTES_TYPE, whole: true },
  [DOMAIN_MAP_FILE]: { type: BYTES_TYPE, whole: false },
  [PACK_INDEX_FILE]: { type: BYTES_TYPE, whole: false },
  [INDEX_FILE]: { type: BYTES_TYPE, whole: false },
};

/** A pack: named by the SHA-256 of its bytes (hex), which the build statement lists. */
const PACK_FILE = new RegExp(`^${PACKS_DIR}/([0-9a-f]{64})\\.jsonl$`);

/**
 * The bytes a file of a build is read in when it is not read whole, and written at once: the chunk
 * of a streamed answer (core/limits.ts, the most one ranged read of a pack may be, the chunk
 * `mvr mirror` asks for too), so a pack of any size costs the gateway this much memory per answer, not its size.
 */
export const MIRROR_CHUNK_BYTES = ANSWER_LIMITS.writeChunkBytes;

/** A shard's log entries, `<shard>/log.jsonl` (its records' indexes and salts), which a mirror needs to serve record proofs: read a range at a time. */
const SHARD_LOG = new RegExp(`^[0-9a-f]{2}/${SHARD_LOG_FILE.replace('.', '\\.')}$`);

/** Whether a mirror may ask for a file of that name (`packs/<sha256 hex>.jsonl`, `<shard>/log.jsonl`, or one of the build's named files). */
export function isMirrorFile(file: string): boolean {
  return Object.hasOwn(NAMED, file) || PACK_FILE.test(file) || SHARD_LOG.test(file);
}

/** A file of a build as a mirror gets it. */
export interface MirrorFile {
  /** Its length in bytes. */
  size: number;
  /** A strong entity tag: a pack's SHA-256 (its name); a file read whole, the SHA-256 of its bytes; else the build and the name, as a build's other files never change once written. */
  etag: string;
  contentType: string;
  /** At most `length` bytes from byte `start` (fewer only at its end). */
  read(start: number, length: number): Promise<Buffer>;
}

/**
 * What a mirror fetches of the builds the gateway keeps (`GET /v1/mirror...`): the live build's
 * id and signed statement, and any file of a live or kept build by name, read through the store
 * so that a folder and a bucket answer alike. Whether the bytes are right is the mirror's to
 * check (every pack's hash and length are in the signed statement); the gateway hands them on.
 */
export class MirrorFiles {
  constructor(
    private readonly records: RecordsService,
    private readonly history: BuildHistory,
  ) {}

  /**
   * The live build and its statement, as checked when the build was taken (STORE_UNAVAILABLE
   * without one). A store that names no build (an http(s) origin, a copy of one build's folder)
   * keeps no builds a mirror could fetch by id: BUILD_NOT_FOUND, saying so.
   */
  async live(): Promise<{ build: string; statement: BuildStatement }> {
    const served = await this.records.buildMap();
    if (this.records.store.liveBuild() === null)
      throw new BuildNotFoundError(
        '',
        `this gateway keeps no builds to mirror: ${this.records.store.name} holds one build's files without its id (an http(s) origin, or a copy of one build's folder); mirror from a gateway on the records folder "mvr build" writes or on s3://, or from the bucket itself`,
      );
    return { build: served.build, statement: served.statement };
  }

  /**
   * A file of a kept (or the live) build, or null when the build has no such file. BUILD_NOT_FOUND
   * for a build the store does not keep; `file` must be one {@link isMirrorFile} takes.
   */
  async open(build: string, file: string): Promise<MirrorFile | null> {
    if (!(await this.history.builds()).some((b) => b.id === build)) throw new BuildNotFoundError(build);
    const store = this.records.store;
    const named = NAMED[file];
    if (named?.whole) {
      const bytes = await store.readFile(build, file);
      if (!bytes) return null;
      return {
        size: bytes.length,
        etag: strongEtag(bytes),
        contentType: named.type,
        read: async (start, length) => bytes.subarray(start, start + length),
      };
    }
    const size = await store.fileSize(build, file);
    if (size === null) return null;
    const pack = PACK_FILE.exec(file)?.[1];
    return {
      size,
      etag: pack ? `"${pack}"` : `"${build}/${file}"`,
      contentType: named?.type ?? BYTES_TYPE,
      read: async (start, length) => {
        const bytes = await store.readRange(build, file, start, length);
        if (!bytes || (bytes.length < length && start + bytes.length < size))
          throw new StoreUnavailableError(`${file} of build ${build} in ${store.name} is shorter than the ${size} bytes it had`);
        return bytes;
      },
    };
  }
}
