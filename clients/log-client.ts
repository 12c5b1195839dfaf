import { dirname, join } from 'node:path';
import { LOG_CHECKPOINT, LOG_VKEY_PATH } from '../core/layout.ts';
import type { TileFetch } from '../core/tlog/tile-tree.ts';
import { isUrl, pathIn, readFileOrUrl } from './file-or-url.ts';

/**
 * A tiled log read from where it is published: a URL prefix (`https://verify.example/log`) or a
 * folder (`public/log`). Gives its checkpoint, its tiles, and where its verifier key is by default.
 */
export function logLocation(where: string): { checkpoint: () => Promise<string>; tiles: TileFetch; defaultVkey: string } {
  const base = where.replace(/\/+$/, '');
  return {
    checkpoint: async () => (await readFileOrUrl(pathIn(base, LOG_CHECKPOINT))).toString('utf8'),
    tiles: async (_tile, path) => readFileOrUrl(pathIn(base, path)),
    defaultVkey: isUrl(base) ? new URL(LOG_VKEY_PATH, base).href : join(dirname(base), LOG_VKEY_PATH),
  };
}
