import { createHash } from 'node:crypto';
import { StoreUnavailableError } from '../core/errors.ts';
import { DOMAIN_MAP_FILE } from '../core/layout.ts';

/** Leaves of a domain map in one chunk: a question about one domain reads one chunk, 32 KiB. */
export const CHUNK_LEAVES = 1024;
const LEAF = 32;

/** Reads `length` bytes of a build's domain map file from byte `start` (null: the store has no such file). */
export type MapRangeReader = (start: number, length: number) => Promise<Buffer | null>;

/**
 * What a gateway keeps of a kept build's domain map between requests: not its leaves (32 bytes a
 * domain, 32 MB at a million) but, for each chunk of {@link CHUNK_LEAVES} leaves, its first leaf
 * and the SHA-256 of its bytes, about 64 bytes per 1024 domains. It is made from a map already
 * checked whole against the build's signed statement, so a chunk read again later from the store
 * is checked against it: whether a domain is in that build costs one ranged read of at most 32
 * KiB and one hash, whatever the build's size, and is still decided by the build's signed map,
 * never by a record file that happens to be missing.
 */
export class MapIndex {
  private constructor(
    readonly build: string,
    readonly size: number,
    private readonly firsts: Buffer,
    private readonly digests: Buffer,
  ) {}

  /** The index of a build's map from its leaves (checked against its statement by the caller). */
  static of(build: string, leaves: Uint8Array): MapIndex {
    const size = leaves.length / LEAF;
    const chunks = Math.ceil(size / CHUNK_LEAVES);
    const firsts = Buffer.alloc(chunks * LEAF);
    const digests = Buffer.alloc(chunks * LEAF);
    for (let c = 0; c < chunks; c++) {
      const bytes = leaves.subarray(c * CHUNK_LEAVES * LEAF, Math.min((c + 1) * CHUNK_LEAVES, size) * LEAF);
      firsts.set(bytes.subarray(0, LEAF), c * LEAF);
      digests.set(createHash('sha256').update(bytes).digest(), c * LEAF);
    }
    return new MapIndex(build, size, firsts, digests);
  }

  /** Bytes held. */
  get bytes(): number {
    return this.firsts.length + this.digests.length;
  }

  /** Whether the leaf `hash` is in the map: one chunk read with `read`, checked against its digest. */
  async has(hash: Uint8Array, read: MapRangeReader): Promise<boolean> {
    return (await this.position(hash, read)) >= 0;
  }

  /** The place of the leaf `hash` in the map (its record's place in the build's packs), or -1 when it is not in it: as {@link has}. */
  async position(hash: Uint8Array, read: MapRangeReader): Promise<number> {
    const chunk = this.chunkOf(hash);
    if (chunk < 0) return -1;
    const start = chunk * CHUNK_LEAVES * LEAF;
    const length = Math.min(CHUNK_LEAVES * LEAF, this.size * LEAF - start);
    const bytes = await read(start, length);
    const refuse = (why: string) => new StoreUnavailableError(`build ${this.build} refused: its ${DOMAIN_MAP_FILE} ${why}`);
    if (!bytes) throw refuse('is gone');
    if (
      bytes.length !== length ||
      !createHash('sha256')
        .update(bytes)
        .digest()
        .equals(this.digests.subarray(chunk * LEAF, (chunk + 1) * LEAF))
    )
      throw refuse(`changed since it was checked against the build's statement (bytes ${start} to ${start + length})`);
    let lo = 0;
    let hi = length / LEAF;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = Buffer.compare(bytes.subarray(mid * LEAF, (mid + 1) * LEAF), hash);
      if (c === 0) return chunk * CHUNK_LEAVES + mid;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  /** The last chunk whose first leaf is at or below `hash`; -1 when `hash` is below every leaf. */
  private chunkOf(hash: Uint8Array): number {
    let lo = 0;
    let hi = this.firsts.length / LEAF;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Buffer.compare(this.firsts.subarray(mid * LEAF, (mid + 1) * LEAF), hash) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }
}
