import { createHash } from 'node:crypto';
import { ENTRY_SIZE, type LeafSize } from '#shared';
import { StoreUnavailableError } from '../core/errors/errors.ts';
import { DOMAIN_MAP_FILE } from '../core/layout.ts';

/** Bytes of a chunk of a domain map at most: a question about one domain reads one chunk. */
export const CHUNK_BYTES = 32 * 1024;
/** Bytes of a domain hash: the first of every leaf, what leaves are ordered by and what {@link MapIndex} keeps of a chunk. */
const HASH = 32;

/** Leaves of a map in one chunk: 1024 hashes of a v1 map, 399 entries of a v2 one, so a chunk stays within {@link CHUNK_BYTES}. */
export function chunkLeaves(leafSize: LeafSize): number {
  return Math.floor(CHUNK_BYTES / leafSize);
}

/** Reads `length` bytes of a build's domain map file from byte `start` (null: the store has no such file). */
export type MapRangeReader = (start: number, length: number) => Promise<Buffer | null>;

/**
 * What a gateway keeps of a kept build's domain map between requests: not its leaves (82 bytes a
 * domain in a v2 map, 82 MB at a million) but, for each chunk of {@link chunkLeaves} leaves, the
 * domain hash of its first leaf and the SHA-256 of its bytes, 64 bytes per chunk. It is made from a
 * map already checked whole against the build's signed statement, so a chunk read again later from
 * the store is checked against it: whether a domain is in that build costs one ranged read of at
 * most {@link CHUNK_BYTES} and one hash, whatever the build's size, and is still decided by the
 * build's signed map, never by a record file that happens to be missing.
 */
export class MapIndex {
  private readonly perChunk: number;

  private constructor(
    readonly build: string,
    readonly size: number,
    private readonly leafSize: LeafSize,
    private readonly firsts: Buffer,
    private readonly digests: Buffer,
  ) {
    this.perChunk = chunkLeaves(leafSize);
  }

  /** The index of a build's map from its leaves of `leafSize` bytes (checked against its statement by the caller). */
  static of(build: string, leaves: Uint8Array, leafSize: LeafSize): MapIndex {
    const size = leaves.length / leafSize;
    const perChunk = chunkLeaves(leafSize);
    const chunks = Math.ceil(size / perChunk);
    const firsts = Buffer.alloc(chunks * HASH);
    const digests = Buffer.alloc(chunks * HASH);
    for (let c = 0; c < chunks; c++) {
      const bytes = leaves.subarray(c * perChunk * leafSize, Math.min((c + 1) * perChunk, size) * leafSize);
      firsts.set(bytes.subarray(0, HASH), c * HASH);
      digests.set(createHash('sha256').update(bytes).digest(), c * HASH);
    }
    return new MapIndex(build, size, leafSize, firsts, digests);
  }

  /** Bytes held. */
  get bytes(): number {
    return this.firsts.length + this.digests.length;
  }

  /** Whether the domain `hash` is in the map: one chunk read with `read`, checked against its digest. */
  async has(hash: Uint8Array, read: MapRangeReader): Promise<boolean> {
    return (await this.position(hash, read)) !== null;
  }

  /**
   * The place of the domain `hash` in the map (its record's place in the build's packs) and the
   * entry there (v2; null in a v1 map, whose leaves name no record), or null when it is not in it: as {@link has}.
   */
  async position(hash: Uint8Array, read: MapRangeReader): Promise<{ index: number; entry: Uint8Array | null } | null> {
    const chunk = this.chunkOf(hash);
    if (chunk < 0) return null;
    const leaf = this.leafSize;
    const start = chunk * this.perChunk * leaf;
    const length = Math.min(this.perChunk * leaf, this.size * leaf - start);
    const bytes = await read(start, length);
    const refuse = (why: string) => new StoreUnavailableError(`build ${this.build} refused: its ${DOMAIN_MAP_FILE} ${why}`);
    if (!bytes) throw refuse('is gone');
    if (
      bytes.length !== length ||
      !createHash('sha256')
        .update(bytes)
        .digest()
        .equals(this.digests.subarray(chunk * HASH, (chunk + 1) * HASH))
    )
      throw refuse(`changed since it was checked against the build's statement (bytes ${start} to ${start + length})`);
    let lo = 0;
    let hi = length / leaf;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = Buffer.compare(bytes.subarray(mid * leaf, mid * leaf + HASH), hash);
      if (c === 0)
        return { index: chunk * this.perChunk + mid, entry: leaf === ENTRY_SIZE ? bytes.subarray(mid * leaf, (mid + 1) * leaf) : null };
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return null;
  }

  /** The last chunk whose first leaf is at or below `hash`; -1 when `hash` is below every leaf. */
  private chunkOf(hash: Uint8Array): number {
    let lo = 0;
    let hi = this.firsts.length / HASH;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Buffer.compare(this.firsts.subarray(mid * HASH, (mid + 1) * HASH), hash) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }
}
