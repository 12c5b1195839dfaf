import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FetchFailedError } from './key-set-client.ts';

// The one place `mvr verify` and `mvr log` read what a flag names as a file, a folder or a URL.

/** Whether a flag's value names an http(s) URL rather than a file or folder. */
export const isUrl = (fileOrUrl: string): boolean => /^https?:\/\//i.test(fileOrUrl);

/** A file's bytes, or a URL's (200 only); either failing is FETCH_FAILED naming what could not be read. */
export async function readFileOrUrl(fileOrUrl: string, timeoutMs = 10_000): Promise<Buffer> {
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

/** `path` (relative, with `/`) inside a folder or under a URL prefix. */
export function pathIn(folderOrUrl: string, path: string): string {
  const base = folderOrUrl.replace(/\/+$/, '');
  return isUrl(base) ? `${base}/${path}` : join(base, path);
}
