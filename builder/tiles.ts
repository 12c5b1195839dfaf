import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TileFetch } from '../core/tlog/tile-tree.ts';

/** Reads tiles from a log folder (public/log). */
export function folderTiles(logDir: string): TileFetch {
  return async (_tile, path) => {
    try {
      return await readFile(join(logDir, path));
    } catch (error) {
      throw new Error(`cannot read ${join(logDir, path)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
}
