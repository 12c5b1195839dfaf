import { createHash, type Hash, hash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { type PacksHead, packIndexBytes, packPath, recordsPerPackFor } from '@merchant-verify/verifier/internal/issuer';
import { BuildError } from '../core/errors.ts';
import { PACK_INDEX_FILE, PACKS_DIR } from '../core/layout.ts';

/** Bytes gathered before one write to a pack: a few system calls a megabyte, not one a record. */
const WRITE_CHUNK = 1 << 20;

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
  private readonly ends: Uint32Array;
  private readonly files: PacksHead['files'] = [];
  private shardRecords: { hash: Buffer; text: string }[] = [];
  /** Records written so far (the map index of the next one). */
  private written = 0;
  private fd: number | null = null;
  private digest: Hash | null = null;
  private offset = 0;
  private pending: Buffer[] = [];
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
    mkdirSync(join(buildDir, PACKS_DIR), { recursive: true });
  }

  /** The next shard begins (shards come in ascending order): the previous one is written, in hash order. */
  readonly shard = (): void => this.timed(() => this.flushShard());

  /** One record of the current shard, its exact signed text. */
  readonly record = (text: string, domain: string): void =>
    this.timed(() => {
      this.shardRecords.push({ hash: hash('sha256', domain, 'buffer'), text });
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

  private timed<T>(work: () => T): T {
    const started = performance.now();
    try {
      return work();
    } finally {
      this.spentMs += performance.now() - started;
    }
  }

  private flushShard(): void {
    const records = this.shardRecords.sort((a, b) => Buffer.compare(a.hash, b.hash));
    this.shardRecords = [];
    for (const { text } of records) this.append(Buffer.from(`${text}\n`));
  }

  private append(bytes: Buffer): void {
    if (this.fd === null) {
      this.fd = openSync(this.tempPath(), 'wx');
      this.digest = createHash('sha256');
      this.offset = 0;
    }
    this.digest!.update(bytes);
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    this.offset += bytes.length;
    if (this.written >= this.records) throw new BuildError(`the build announced ${this.records} records, and more came`);
    this.ends[this.written] = this.offset;
    this.written++;
    if (this.pendingBytes >= WRITE_CHUNK) this.writePending();
    if (this.written % this.perPack === 0) this.closePack();
  }

  private writePending(): void {
    if (this.pendingBytes > 0) writeSync(this.fd!, Buffer.concat(this.pending, this.pendingBytes));
    this.pending = [];
    this.pendingBytes = 0;
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
