import { foldPerfect, type TreeHasher } from '#shared';
import { HASH_SIZE, rightEdge, TILE_WIDTH, type Tile, tilePath } from './tiles.ts';

/** The log's right edge as it stands: the hashes of each level's partial tile, and the partial entry bundle. */
export interface LogEdge {
  size: number;
  /** Lowest level first; the hashes of the partial tile at that level (possibly none). */
  levels: Uint8Array[][];
  entries: Uint8Array[];
}

export const emptyEdge = (): LogEdge => ({ size: 0, levels: [], entries: [] });

/** Where the appender puts each new tile or bundle (a file, or memory in tests). */
export type TileSink = (path: string, bytes: Uint8Array, tile: Tile) => void;

/**
 * Appends entries to a tiled log, keeping only its right edge in memory (at most 256 hashes a
 * level and 256 entries), so memory stays flat however many entries go in. Full tiles are written
 * as they fill; {@link finish} writes the new partial tiles. It never writes a tile the log had
 * before: only paths of the new tree size, so published tiles are never rewritten.
 */
export class TileAppender {
  private readonly start: { size: number; paths: Set<string> };
  private readonly levels: Uint8Array[][];
  private entries: Uint8Array[];
  private fullTiles: number[] = [];
  size: number;
  /** Paths written, in order. */
  readonly written: string[] = [];
  bytesWritten = 0;

  constructor(
    private readonly h: TreeHasher,
    edge: LogEdge,
    private readonly sink: TileSink,
  ) {
    this.size = edge.size;
    this.levels = edge.levels.map((l) => [...l]);
    this.entries = [...edge.entries];
    const start = rightEdge(edge.size);
    this.fullTiles = start.map((t) => t.index);
    this.start = { size: edge.size, paths: new Set(partialPaths(edge.size)) };
  }

  append(entry: Uint8Array): void {
    if (entry.length > 0xffff) throw new RangeError('a log entry is at most 65,535 bytes');
    this.entries.push(entry);
    if (this.entries.length === TILE_WIDTH) {
      this.put({ level: 'entries', index: Math.floor(this.size / TILE_WIDTH), width: TILE_WIDTH }, bundle(this.entries));
      this.entries = [];
    }
    this.size++;
    this.push(0, this.h.leaf(entry));
  }

  /** Writes the partial tiles and bundle of the new size (those it did not have before). */
  finish(): void {
    if (this.size === this.start.size) return;
    for (let level = 0; level < this.levels.length; level++) {
      const hashes = this.levels[level]!;
      if (hashes.length > 0) this.put({ level, index: this.fullTiles[level] ?? 0, width: hashes.length }, concat(hashes));
    }
    if (this.entries.length > 0)
      this.put({ level: 'entries', index: Math.floor(this.size / TILE_WIDTH), width: this.entries.length }, bundle(this.entries));
  }

  private push(level: number, hash: Uint8Array): void {
    const hashes = (this.levels[level] ??= []);
    hashes.push(hash);
    if (hashes.length < TILE_WIDTH) return;
    const index = this.fullTiles[level] ?? 0;
    this.fullTiles[level] = index + 1;
    this.put({ level, index, width: TILE_WIDTH }, concat(hashes));
    this.levels[level] = [];
    this.push(level + 1, foldPerfect(this.h, hashes));
  }

  private put(tile: Tile, bytes: Uint8Array): void {
    const path = tilePath(tile);
    // A partial tile the log already had (same index and width) has the same bytes: leave it be.
    if (tile.width < TILE_WIDTH && this.start.paths.has(path)) return;
    this.sink(path, bytes, tile);
    this.written.push(path);
    this.bytesWritten += bytes.length;
  }
}

/** The partial tiles and bundle of a tree of `size`. */
export function partialPaths(size: number): string[] {
  const paths: string[] = [];
  for (const t of rightEdge(size)) if (t.width > 0) paths.push(tilePath(t));
  const inBundle = size % TILE_WIDTH;
  if (inBundle > 0) paths.push(tilePath({ level: 'entries', index: Math.floor(size / TILE_WIDTH), width: inBundle }));
  return paths;
}

function concat(hashes: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(hashes.length * HASH_SIZE);
  for (const [i, h] of hashes.entries()) out.set(h, i * HASH_SIZE);
  return out;
}

/** An entry bundle: each entry as a big-endian uint16 length, then its bytes. */
export function bundle(entries: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(entries.reduce((n, e) => n + 2 + e.length, 0));
  let at = 0;
  for (const e of entries) {
    out[at] = e.length >> 8;
    out[at + 1] = e.length & 255;
    out.set(e, at + 2);
    at += 2 + e.length;
  }
  return out;
}

/** The entries of a bundle; throws when its lengths do not add up. */
export function unbundle(bytes: Uint8Array): Uint8Array[] {
  const entries: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; ) {
    if (at + 2 > bytes.length) throw new RangeError('an entry bundle ends inside a length');
    const n = (bytes[at]! << 8) | bytes[at + 1]!;
    if (at + 2 + n > bytes.length) throw new RangeError('an entry bundle ends inside an entry');
    entries.push(bytes.subarray(at + 2, at + 2 + n));
    at += 2 + n;
  }
  return entries;
}

/**
 * Reads the right edge of a log of `size` entries from its tiles, checking that the partial
 * entry bundle hashes to the partial level-0 tile. (That the tiles give the checkpoint's root is
 * the caller's check, with a {@link TileTree}.)
 */
export async function loadEdge(h: TreeHasher, size: number, fetch: (tile: Tile, path: string) => Promise<Uint8Array>): Promise<LogEdge> {
  const edge: LogEdge = { size, levels: [], entries: [] };
  for (const t of rightEdge(size)) {
    const hashes: Uint8Array[] = [];
    if (t.width > 0) {
      const bytes = await fetch(t, tilePath(t));
      if (bytes.length !== t.width * HASH_SIZE) throw new RangeError(`${tilePath(t)} is ${bytes.length} bytes, not ${t.width * HASH_SIZE}`);
      for (let i = 0; i < t.width; i++) hashes.push(bytes.slice(i * HASH_SIZE, (i + 1) * HASH_SIZE));
    }
    edge.levels.push(hashes);
  }
  const inBundle = size % TILE_WIDTH;
  if (inBundle > 0) {
    const tile: Tile = { level: 'entries', index: Math.floor(size / TILE_WIDTH), width: inBundle };
    edge.entries = unbundle(await fetch(tile, tilePath(tile))).map((e) => e.slice());
    const leaves = edge.levels[0] ?? [];
    if (edge.entries.length !== inBundle || edge.entries.some((e, i) => !equalHash(h.leaf(e), leaves[i]!))) {
      throw new RangeError(`${tilePath(tile)} does not hash to the level-0 tile beside it`);
    }
  }
  return edge;
}

function equalHash(a: Uint8Array, b: Uint8Array | undefined): boolean {
  return b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}
