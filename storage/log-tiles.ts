/**
 * Where a tile tree reads its tiles from: a log folder on disk (the build's public/log) or a
 * store's log files. Both the build and its witnessing phase read the tiles, so they live here,
 * below both rooms.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LogInconsistentError, StoreUnavailableError } from '../core/errors.ts';
import type { TileFetch } from '../core/tlog/tile-tree.ts';
import type { Store } from './store.ts';

/**
 * Reads tiles from a log folder (public/log). A tile the checkpoint's size needs and the folder
 * lacks is a log that disagrees with its checkpoint (LOG_INCONSISTENT); any other failed read is
 * the folder being unreadable (STORE_UNAVAILABLE). Both name the file.
 */
export function folderTiles(logDir: string): TileFetch {
  return async (_tile, path) => {
    try {
      return await readFile(join(logDir, path));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const message = `cannot read ${join(logDir, path)}: ${code ?? (error as Error).message}`;
      throw code === 'ENOENT' ? new LogInconsistentError(message, { cause: error }) : new StoreUnavailableError(message, { cause: error });
    }
  };
}

/** Reads a store's log tiles (`log/tile/...`) for a tile tree; a tile the store lacks is LOG_INCONSISTENT, naming it. */
export function storeTiles(store: Pick<Store, 'name' | 'logFile'>): TileFetch {
  return async (_tile, path) => {
    const bytes = await store.logFile(path);
    if (!bytes) throw new LogInconsistentError(`${store.name} has no log/${path}`);
    return bytes;
  };
}
