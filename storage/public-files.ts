import { join } from 'node:path';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { ReadTooLargeError, StoreUnavailableError } from '../core/errors/errors.ts';
import { readRegularFile } from '../core/files.ts';
import { LOG_DIR, LOG_VKEY_PATH } from '../core/layout.ts';
import { readLimitOf } from '../core/limits.ts';
import { type KeySetOrigin, keySetFile } from './key-set-source.ts';

/**
 * A file of a records or public folder: null when there is no such file; a file that cannot be read
 * (EACCES, EIO, a link or a FIFO in its place) makes the store unavailable, never "not there"; one
 * larger than its kind may be (core/limits.ts) is refused unread (ReadTooLargeError).
 */
export async function readFileOrNull(path: string): Promise<Buffer | null> {
  try {
    return await readWithinLimit(path);
  } catch (error) {
    if (error instanceof ReadTooLargeError) throw error;
    return nullIfMissing(path, error);
  }
}

/**
 * A local file's bytes, refused unread (ReadTooLargeError) when it is larger than its kind of file
 * may be (core/limits.ts). Only a regular file is read, opened without following a link
 * ({@link readRegularFile}): a link, a FIFO, a folder or a device in its place is refused.
 */
export function readWithinLimit(path: string): Promise<Buffer> {
  const { kind, bytes } = readLimitOf(path);
  return readRegularFile(path, bytes, () => new ReadTooLargeError(kind, bytes));
}

/** Null for a file that is not there (ENOENT); STORE_UNAVAILABLE for one that cannot be read. */
export function nullIfMissing(path: string, error: unknown): null {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
  throw new StoreUnavailableError(`cannot read ${path}: ${(error as Error).message}`);
}

// The public folder `mvr build` writes beside the records (key set, log tiles and checkpoint, log
// verifier key), as the folder and http(s) origin stores read it.

/** The public folder's key set file. */
export const publicKeySet = (publicDir: string): KeySetOrigin => keySetFile(join(publicDir, KEY_SET_PATH));

/** A file of the public log (`checkpoint`, `tile/...`). */
export const publicLogFile = (publicDir: string, path: string) => readFileOrNull(join(publicDir, LOG_DIR, path));

/** The log's verifier key in the public folder. */
export const publicLogVkey = (publicDir: string) => readFileOrNull(join(publicDir, LOG_VKEY_PATH));
