/**
 * Where a tiled log keeps its hashes and entries (c2sp.org/tlog-tiles): tiles of 256 hashes,
 * `tile/<L>/<N>[.p/<W>]`, and entry bundles, `tile/entries/<N>[.p/<W>]`.
 */

/** Hashes in a full tile; entries in a full bundle. */
export const TILE_WIDTH = 256;
export const HASH_SIZE = 32;

/** A tile: its level (or "entries" for a bundle), index, and width (256 when full). */
export interface Tile {
  level: number | 'entries';
  index: number;
  width: number;
}

/** `<N>` as zero-padded 3-digit path elements, all but the last prefixed with `x`: 1234067 is `x001/x234/067`. */
function indexPath(n: number): string {
  const parts: string[] = [];
  do {
    parts.unshift(String(n % 1000).padStart(3, '0'));
    n = Math.floor(n / 1000);
  } while (n > 0);
  return parts.map((p, i) => (i < parts.length - 1 ? `x${p}` : p)).join('/');
}

export function tilePath(t: Tile): string {
  return `tile/${t.level}/${indexPath(t.index)}${t.width < TILE_WIDTH ? `.p/${t.width}` : ''}`;
}

/** Parses a tile path (as {@link tilePath} writes it, and only so); null for anything else. */
export function parseTilePath(path: string): Tile | null {
  const m = /^tile\/(entries|0|[1-9][0-9]?)\/((?:x[0-9]{3}\/)*)([0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/.exec(path);
  if (!m) return null;
  const level = m[1] === 'entries' ? 'entries' : Number(m[1]);
  if (level !== 'entries' && level > 63) return null;
  const parts = [
    ...m[2]!
      .split('/')
      .filter(Boolean)
      .map((p) => p.slice(1)),
    m[3]!,
  ];
  // No leading zero elements: index 5 is `005`, never `x000/005`.
  if (parts.length > 1 && parts[0] === '000') return null;
  const index = parts.reduce((n, p) => n * 1000 + Number(p), 0);
  const width = m[4] === undefined ? TILE_WIDTH : Number(m[4]);
  if ((m[4] !== undefined && width >= TILE_WIDTH) || !Number.isSafeInteger(index)) return null;
  return { level, index, width };
}

/**
 * Whether a log of `size` entries commits to every hash (or entry) of `t`: the last hash of a
 * level-L tile covers entries up to `(index * 256 + width) * 256^L`. A tile past the checkpoint
 * may still change (a build that failed after writing it), so it is not yet public.
 */
export function tileCovered(t: Tile, size: number): boolean {
  const level = t.level === 'entries' ? 0 : t.level;
  return (t.index * TILE_WIDTH + t.width) * TILE_WIDTH ** level <= size;
}

/** The partial tile at each level of a tree of `size` (width 0 where a level has none), lowest level first. */
export function rightEdge(size: number): { level: number; index: number; width: number }[] {
  const edge: { level: number; index: number; width: number }[] = [];
  for (let level = 0, span = 1; span <= size; level++, span *= TILE_WIDTH) {
    const hashes = Math.floor(size / span);
    edge.push({ level, index: Math.floor(hashes / TILE_WIDTH), width: hashes % TILE_WIDTH });
  }
  return edge;
}

/**
 * The tiles and bundles a log gets when it grows from `from` to `to` entries: every tile that
 * became full, and the partial ones of the new size. The same paths the appender writes; the
 * publish step uploads these.
 */
export function tilesAdded(from: number, to: number): string[] {
  if (to <= from) return [];
  const paths: string[] = [];
  for (let level = 0, span = 1; span <= to; level++, span *= TILE_WIDTH) {
    const fullBefore = Math.floor(from / span / TILE_WIDTH),
      fullAfter = Math.floor(to / span / TILE_WIDTH);
    for (let index = fullBefore; index < fullAfter; index++) paths.push(tilePath({ level, index, width: TILE_WIDTH }));
    const width = Math.floor(to / span) % TILE_WIDTH;
    const unchanged = Math.floor(from / span) === Math.floor(to / span);
    if (width > 0 && !unchanged) paths.push(tilePath({ level, index: fullAfter, width }));
  }
  for (let index = Math.floor(from / TILE_WIDTH); index < Math.floor(to / TILE_WIDTH); index++)
    paths.push(tilePath({ level: 'entries', index, width: TILE_WIDTH }));
  if (to % TILE_WIDTH > 0) paths.push(tilePath({ level: 'entries', index: Math.floor(to / TILE_WIDTH), width: to % TILE_WIDTH }));
  return paths;
}
