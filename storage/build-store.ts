import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RecordUnavailableError, StoreUnavailableError } from '@merchant-verify/verifier/errors';
import { fileVersion, MAX_RECORD_BYTES, NotARecordFileError, readRegularFile } from '../core/files.ts';
import { BUILD_KEPT_OBJECT, BUILDS_DIR, KEPT_FILE, MANIFEST_FILE } from '../core/layout.ts';
import { keptBuilds, parseKeptList, readKept, type KeptBuild } from './kept-builds.ts';
import { BodyTooLargeError, type S3Bucket } from './s3/bucket.ts';

/**
 * Where the kept builds are read from: a records folder as `mvr build` leaves it, or a bucket
 * as `mvr publish` fills it. Paths are inside a build (`manifest.json`, `ab/<domain>.json`,
 * `changes/<id>.jsonl`). Everything decided about them (which builds count, the serve rule,
 * pages and cursors) is the same for both, in `BuildHistory`; a store only fetches bytes.
 */
export interface BuildStore {
  /** Changes when the kept list may have changed under the same live build; it is read again only then. */
  listVersion(): Promise<string>;
  /** The kept builds, newest first, the live one first (see `keptBuilds`). */
  kept(): Promise<KeptBuild[]>;
  /** A file of a build, or null when there is no such file (an unreadable store throws). */
  read(build: string, path: string): Promise<Buffer | null>;
  /** A record of a build, only from a regular file or object of at most 64 KiB (UNAVAILABLE otherwise), or null when there is none. */
  readRecord(build: string, path: string): Promise<Buffer | null>;
  /** At most `length` bytes of a build's file from byte `start` (fewer at its end), or null when there is no such file. */
  readRange(build: string, path: string, start: number, length: number): Promise<Buffer | null>;
}

/** The builds of a records folder: `current`, `kept.json` and `builds/<id>/`. */
export class FolderBuildStore implements BuildStore {
  constructor(private readonly recordsDir: string) {}

  /** A build swaps, then writes kept.json, then prunes: the file's signature tells when to read the list again. */
  listVersion(): Promise<string> {
    return fileVersion(join(this.recordsDir, KEPT_FILE));
  }

  kept(): Promise<KeptBuild[]> {
    return readKept(this.recordsDir);
  }

  async read(build: string, path: string): Promise<Buffer | null> {
    try {
      return await readFile(this.file(build, path));
    } catch (error) {
      return this.missing(build, path, error);
    }
  }

  async readRecord(build: string, path: string): Promise<Buffer | null> {
    try {
      return await readRegularFile(this.file(build, path));
    } catch (error) {
      if (error instanceof NotARecordFileError) throw new RecordUnavailableError(`record file ${this.file(build, path)} ${error.message}`);
      return this.missing(build, path, error);
    }
  }

  async readRange(build: string, path: string, start: number, length: number): Promise<Buffer | null> {
    let handle;
    try {
      handle = await open(this.file(build, path));
    } catch (error) {
      return this.missing(build, path, error);
    }
    try {
      const buffer = Buffer.alloc(length);
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await handle.read(buffer, filled, length - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buffer.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }

  /** No such file is null; a file that cannot be read (EACCES, EIO) makes the store unavailable, never "not there". */
  private missing(build: string, path: string, error: unknown): null {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StoreUnavailableError(`cannot read ${this.file(build, path)}: ${(error as Error).message}`);
  }

  private file(build: string, path: string): string {
    return join(this.recordsDir, BUILDS_DIR, build, path);
  }
}

/**
 * The builds in a bucket, as `mvr publish` lays them out: the live build (as the records source
 * last read `live.json`) and, beside its manifest, the kept list published with it. Objects of a
 * build never change, so the list is read once per live build. "Not found" is believed only from
 * a bucket that answers; anything else is STORE_UNAVAILABLE, never a missing record or build.
 */
export class S3BuildStore implements BuildStore {
  constructor(
    private readonly bucket: S3Bucket,
    /** The live build's id, as the records source last confirmed it ('' while the bucket cannot be read). */
    private readonly live: () => string,
  ) {}

  async listVersion(): Promise<string> {
    return '';
  }

  async kept(): Promise<KeptBuild[]> {
    const live = this.live();
    if (!live) throw new StoreUnavailableError(`records store ${this.bucket.name} unavailable: no live build read yet`);
    // A build published before kept lists were uploaded has none: it is then the only kept build.
    const list = await this.read(live, BUILD_KEPT_OBJECT);
    return keptBuilds(live, list ? parseKeptList(list) : [], (id) => this.read(id, MANIFEST_FILE));
  }

  async read(build: string, path: string): Promise<Buffer | null> {
    const res = await this.get(build, path, {});
    return res && res.body;
  }

  async readRecord(build: string, path: string): Promise<Buffer | null> {
    const res = await this.get(build, path, {}, MAX_RECORD_BYTES);
    return res && res.body;
  }

  async readRange(build: string, path: string, start: number, length: number): Promise<Buffer | null> {
    const res = await this.get(build, path, { range: `bytes=${start}-${start + length - 1}` });
    if (!res) return null;
    // 416: the range starts at or past the end. A 200 is a server that ignored the range.
    if (res.statusCode === 416) return Buffer.alloc(0);
    return res.statusCode === 200 ? res.body.subarray(start, start + length) : res.body;
  }

  private async get(build: string, path: string, headers: Record<string, string>, maxBytes?: number) {
    const key = `${BUILDS_DIR}/${build}/${path}`;
    let res;
    try {
      res = await this.bucket.get(key, headers, maxBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError) throw new RecordUnavailableError(`${this.bucket.name}/${key} has more than the ${maxBytes} bytes a record may have`);
      // No `cause`: the gateway answers with an error's cause when it has one (h3 passes it on).
      throw new StoreUnavailableError(`records store ${this.bucket.name} unavailable: ${(error as Error).message}`);
    }
    if (res.statusCode === 404) return null;
    if (res.statusCode === 200 || res.statusCode === 206 || (res.statusCode === 416 && headers.range)) return res;
    throw new StoreUnavailableError(`records store ${this.bucket.name} answered ${res.statusCode} for ${key}`);
  }
}
