import { consistencyProof, foldPerfect, inclusionProof, type RangeHash, rangeHash, type TreeHasher, verifyConsistency } from '#shared';
import { HASH_SIZE, TILE_WIDTH, type Tile, tilePath } from './tiles.ts';

/** Reads one tile's bytes (from a folder, or over HTTP); throws when it cannot. */
export type TileFetch = (tile: Tile, path: string) => Promise<Uint8Array>;

/** Why a tile could not serve: missing, or not the size its path says. */
export class TileError extends Error {}

/**
 * A tree of `size` leaves as its tiles hold it: its root, and inclusion and consistency proofs
 * computed from the tiles (as tlog clients do), reading only the tiles a proof needs, each once.
 * A perfect subtree of 2^k leaves is 2^(k mod 8) hashes of the tile at level floor(k / 8).
 */
export class TileTree {
  readonly mth: RangeHash;
  private readonly tiles = new Map<string, Promise<Uint8Array>>();

  constructor(
    private readonly h: TreeHasher,
    readonly size: number,
    private readonly fetch: TileFetch,
  ) {
    this.mth = rangeHash(h, (start, end) => this.perfect(start, end));
  }

  root(): Promise<Uint8Array> {
    return this.size === 0 ? Promise.resolve(this.h.empty()) : this.mth(0, this.size);
  }

  inclusion(index: number): Promise<Uint8Array[]> {
    return inclusionProof(this.mth, index, this.size);
  }

  /** The proof that this tree extends the tree of its first `older` leaves. */
  consistency(older: number): Promise<Uint8Array[]> {
    return consistencyProof(this.mth, older, this.size);
  }

  /**
   * Whether this tree, with root `root`, is an append-only extension of `older`: the same first
   * `older.size` entries, unchanged. The consistency proof is computed from the tiles and checked
   * against both roots (RFC 9162, 2.1.4.2), so the tiles are never trusted on their own. Every
   * tree extends the empty one.
   */
  async extends(older: { size: number; root: Uint8Array }, root: Uint8Array): Promise<boolean> {
    if (this.size < older.size) return false;
    if (older.size === 0) return true;
    const proof = older.size === this.size ? [] : await this.consistency(older.size);
    return verifyConsistency(this.h, older, { size: this.size, root }, proof);
  }

  /** The leaf hashes of `[start, end)` (level 0), for checking entries against them. */
  async leafHashes(start: number, end: number): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    for (let i = start; i < end; i++) out.push(await this.perfect(i, i + 1));
    return out;
  }

  private async perfect(start: number, end: number): Promise<Uint8Array> {
    let level = 0,
      span = 1;
    while (span * TILE_WIDTH <= end - start) {
      level++;
      span *= TILE_WIDTH;
    }
    const first = start / span;
    const index = Math.floor(first / TILE_WIDTH);
    const full = (index + 1) * TILE_WIDTH * span <= this.size;
    const width = full ? TILE_WIDTH : Math.floor(this.size / span) % TILE_WIDTH;
    const bytes = await this.tile({ level, index, width });
    const from = first % TILE_WIDTH;
    const count = (end - start) / span;
    const hashes: Uint8Array[] = [];
    for (let i = from; i < from + count; i++) hashes.push(bytes.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE));
    return foldPerfect(this.h, hashes);
  }

  /**
   * A tile, read once. A log may delete a partial tile once its full tile is there (c2sp.org/
   * tlog-tiles), so a partial tile that cannot be read is taken from the start of the full one;
   * if that cannot be read either, the partial tile's error is the one reported.
   */
  private tile(t: Tile): Promise<Uint8Array> {
    const path = tilePath(t);
    let got = this.tiles.get(path);
    if (!got) {
      got = this.read(t, path).catch((error: unknown) => {
        if (t.width === TILE_WIDTH) throw error;
        const full = { ...t, width: TILE_WIDTH };
        return this.read(full, tilePath(full)).then(
          (bytes) => bytes.subarray(0, t.width * HASH_SIZE),
          () => Promise.reject(error),
        );
      });
      this.tiles.set(path, got);
    }
    return got;
  }

  private async read(t: Tile, path: string): Promise<Uint8Array> {
    const bytes = await this.fetch(t, path);
    if (bytes.length !== t.width * HASH_SIZE) throw new TileError(`${path} is ${bytes.length} bytes, not ${t.width * HASH_SIZE}`);
    return bytes;
  }
}
