import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LOG_CHECKPOINT, LOG_VKEY_PATH } from '../core/layout.ts';
import type { TileFetch } from '../core/tlog/tile-tree.ts';
import { FetchFailedError } from './key-set-client.ts';

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/** A file's bytes, or a URL's (200 only). */
export async function readBytes(fileOrUrl: string, timeoutMs = 10_000): Promise<Buffer> {
  if (!isUrl(fileOrUrl)) {
    try {
      return await readFile(fileOrUrl);
    } catch (error) {
      throw new FetchFailedError(`cannot read ${fileOrUrl}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  // undici is loaded on the first request, not with the CLI: `mvr verify --file` never fetches.
  const { request } = await import('undici');
  let res;
  try {
    res = await request(fileOrUrl, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  } catch (error) {
    throw new FetchFailedError(`cannot reach ${new URL(fileOrUrl).origin}: ${(error as Error).message}`);
  }
  const bytes = Buffer.from(await res.body.arrayBuffer());
  if (res.statusCode !== 200) throw new FetchFailedError(`${fileOrUrl} answered ${res.statusCode}`, res.statusCode);
  return bytes;
}

/**
 * A tiled log read from where it is published: a URL prefix (`https://verify.example/log`) or a
 * folder (`public/log`). Gives its checkpoint, its tiles, and where its verifier key is by default.
 */
export function logLocation(where: string): { checkpoint: () => Promise<string>; tiles: TileFetch; defaultVkey: string } {
  const base = where.replace(/\/+$/, '');
  return {
    checkpoint: async () => (await readBytes(isUrl(base) ? `${base}/${LOG_CHECKPOINT}` : join(base, LOG_CHECKPOINT))).toString('utf8'),
    tiles: async (_tile, path) => readBytes(isUrl(base) ? `${base}/${path}` : join(base, path)),
    defaultVkey: isUrl(base) ? new URL(LOG_VKEY_PATH, base).href : join(dirname(base), LOG_VKEY_PATH),
  };
}
