import { createHash, type Hash, hash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PacksHead, packIndexBytes, packPath, recordsPerPackFor } from '#shared';
import { BuildError } from '../core/errors/errors.ts';
import { writeAllSync } from '../core/files.ts';
import { PACK_INDEX_FILE, PACKS_DIR } from '../core/layout.ts';

/** Bytes gathered before one write to a pack: a few system calls a megabyte, not one a record. */
const WRITE_CHUNK = 1 << 20;
const NEWLINE = Buffer.from('\n');

/** A build's records read back from its packs (see {@link packedRecords}). */
export interface PackedRecords {
  /** The exact bytes of the record on line `line` of the index. */
  bytes(line: number): Buffer;
  close(): void;
}

/** Where a build's records are in its packs, as {@link PackWriter} wrote them. */
export interface PackPlaces {
  /** Each record's place in the map (and so in the packs), by its line in the index. */
  places: Uint32Array<ArrayBuffer>;
  /** Where each record's line ends in its pack, in map order (the pack index, once encoded). */
  ends: Uint32Array<ArrayBuffer>;
}

/**
 * The records of a build's packs, read back by their line in the index (the log appends them in
 * domain order): the exact bytes the packs hold, one read a record.
 */
export function packedRecords(buildDir: string, head: PacksHead, { places, ends }: PackPlaces): PackedRecords {
  const fds = new Map<number, number>();
  const perPack = head.records_per_pack;
  return {
    bytes: (line) => {
      const place = places[line]!;
      const pack = Math.floor(place / perPack);
      let fd = fds.get(pack);
      if (fd === undefined) fds.set(pack, (fd = openSync(join(buildDir, packPath(head.files[pack]!.sha256)), 'r')));
      const start = place % perPack === 0 ? 0 : ends[place - 1]!;
      // Without the line's newline.
      const bytes = Buffer.allocUnsafe(ends[place]! - start - 1);
      readSync(fd, bytes, 0, bytes.length, start);
      return bytes;
    },
    close: () => {
      for (const fd of fds.values()) closeSync(fd);
      fds.clear();
    },
  };
}

/**
 * Writes a build's packs as `writeIndex` hands over its records, shard by shard. A record's shard is
 * the first byte of the SHA-256 its domain is sorted by in the map, so sorting each shard's records
 * by hash puts the whole build in map order with one shard in memory at a time (a few megabytes at
 * a million records). Each pack is hashed as it is written and named by its hash once complete;
 * beside the packs, the pack index gives every record's end offset (see `recordPlace`).
 */
export class PackWriter {
  private readonly perPack: number;
  /** Where each record's line ends in its pack, in map order: the pack index, once encoded. */
  private readonly ends: Uint32Array<ArrayBuffer>;
  /** Each record's place in the map (and so in the packs), by its line in the index. */
  private readonly places: Uint32Array<ArrayBuffer>;
  private readonly files: PacksHead['files'] = [];
  /** The current shard's records: their bytes are views of what the index read, valid until the shard ends (see ShardRecord). */
  private shardRecords: { hash: Buffer; bytes: Buffer; line: number }[] = [];
  /** Records handed over so far (the index line of the next one). */
  private seen = 0;
  /** Records written so far (the map index of the next one). */
  private written = 0;
  private fd: number | null = null;
  private digest: Hash | null = null;
  private offset = 0;
  /** Lines gathered for the pack being written (`pendingBytes` of them): hashed and written a chunk at a time. */
  private readonly pending = Buffer.allocUnsafe(WRITE_CHUNK);
  private pendingBytes = 0;
  /** Time spent sorting, hashing and writing the packs and their index, for the build's summary (ms). */
  spentMs = 0;

  /**
   * @param buildDir the staging folder the packs are written into (under `packs/`)
   * @param records the build's record count, known before the index is written
   * @param recordsPerPack records a pack holds; by default chosen by the build's size
   */
  constructor(
    private readonly buildDir: string,
    private readonly records: number,
    recordsPerPack?: number,
  ) {
    this.perPack = recordsPerPack ?? recordsPerPackFor(records);
    this.ends = new Uint32Array(records);
    this.places = new Uint32Array(records);
    mkdirSync(join(buildDir, PACKS_DIR), { recursive: true });
  }

  /** A shard's records are all handed over (shards come in ascending order): they are written, in hash order. */
  readonly shard = (): void => this.timed(() => this.flushShard());

  /** One record of the current shard, its exact signed bytes. */
  readonly record = (bytes: Buffer, domain: string): void =>
    this.timed(() => {
      this.shardRecords.push({ hash: hash('sha256', domain, 'buffer'), bytes, line: this.seen++ });
    });

  /** Writes what is left and the pack index; the statement's `packs`. Throws when another number of records came than announced. */
  finish(): PacksHead {
    return this.timed(() => {
      this.flushShard();
      this.closePack();
      if (this.written !== this.records)
        throw new BuildError(`the packs hold ${this.written} records, but the build wrote ${this.records}`);
      writeFileSync(join(this.buildDir, PACK_INDEX_FILE), packIndexBytes(this.ends));
      return { records_per_pack: this.perPack, files: this.files };
    });
  }

  /** Closes the pack being written, if any, when the build failed: it holds no file open after (the pack goes with its staging folder). */
  abandon(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }

  private timed<T>(work: () => T): T {
    const started = performance.now();
    try {
      return work();
    } finally {
      this.spentMs += performance.now() - started;
    }
  }

  /** Where the records are, once {@link finish}ed: what {@link packedRecords} reads them back by. */
  placed(): PackPlaces {
    return { places: this.places, ends: this.ends };
  }

  private flushShard(): void {
    const records = this.shardRecords.sort((a, b) => Buffer.compare(a.hash, b.hash));
    this.shardRecords = [];
    for (const { bytes, line } of records) {
      this.places[line] = this.written;
      this.append(bytes);
    }
  }

  private append(bytes: Buffer): void {
    if (this.fd === null) {
      this.fd = openSync(this.tempPath(), 'wx');
      this.digest = createHash('sha256');
      this.offset = 0;
    }
    if (this.written >= this.records) throw new BuildError(`the build announced ${this.records} records, and more came`);
    // A line that does not fit what is gathered goes after it; one longer than a chunk (no record is: 64 KiB at most) on its own.
    if (this.pendingBytes + bytes.length + 1 > WRITE_CHUNK) this.writePending();
    if (bytes.length + 1 > WRITE_CHUNK) this.write(Buffer.concat([bytes, NEWLINE]));
    else {
      this.pendingBytes += bytes.copy(this.pending, this.pendingBytes);
      this.pending[this.pendingBytes++] = 0x0a;
    }
    this.offset += bytes.length + 1;
    this.ends[this.written] = this.offset;
    this.written++;
    if (this.written % this.perPack === 0) this.closePack();
  }

  private writePending(): void {
    if (this.pendingBytes === 0) return;
    this.write(this.pending.subarray(0, this.pendingBytes));
    this.pendingBytes = 0;
  }

  private write(bytes: Buffer): void {
    this.digest!.update(bytes);
    writeAllSync(this.fd!, bytes);
  }

  private closePack(): void {
    if (this.fd === null) return;
    this.writePending();
    closeSync(this.fd);
    this.fd = null;
    const sha256 = this.digest!.digest('hex');
    renameSync(this.tempPath(), join(this.buildDir, packPath(sha256)));
    this.files.push({ sha256, bytes: this.offset });
  }

  private tempPath(): string {
    return join(this.buildDir, PACKS_DIR, `.pack-${this.files.length}`);
  }
}
