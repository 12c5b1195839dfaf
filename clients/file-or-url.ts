import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FetchFailedError } from '../core/errors/errors.ts';
import { readLimitOf } from '../core/limits.ts';
import { boundedGet } from './bounded-get.ts';

// The one place `mvr verify` and `mvr log` read what a flag names as a file, a folder or a URL.

/** Whether a flag's value names an http(s) URL rather than a file or folder. */
export const isUrl = (fileOrUrl: string): boolean => /^https?:\/\//i.test(fileOrUrl);

/**
 * A file's bytes, or a URL's (200 only, within the limits its kind of file has, never through a
 * redirect); either failing is FETCH_FAILED naming what could not be read.
 */
export async function readFileOrUrl(fileOrUrl: string, timeoutMs = 10_000): Promise<Buffer> {
  if (!isUrl(fileOrUrl)) {
    try {
      return await readFile(fileOrUrl);
    } catch (error) {
      throw new FetchFailedError(`cannot read ${fileOrUrl}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  const res = await boundedGet(fileOrUrl, { limit: readLimitOf(new URL(fileOrUrl).pathname), timeoutMs });
  if (res.statusCode !== 200) throw new FetchFailedError(`${fileOrUrl} answered ${res.statusCode}`, res.statusCode);
  return res.body;
}

/** `path` (relative, with `/`) inside a folder or under a URL prefix. */
export function pathIn(folderOrUrl: string, path: string): string {
  const base = folderOrUrl.replace(/\/+$/, '');
  return isUrl(base) ? `${base}/${path}` : join(base, path);
}
