import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreUnavailableError } from '@merchant-verify/verifier/errors';
import { KEY_SET_PATH } from '@merchant-verify/verifier/keyset';
import { LOG_DIR, LOG_VKEY_PATH } from '../core/layout.ts';
import { keySetFile, type KeySetOrigin } from './key-set-source.ts';

/**
 * The public folder `mvr build` writes beside the records (key set, log tiles and checkpoint,
 * log verifier key), as the folder and http(s) origin stores read it. A missing file is null; a
 * file that cannot be read (EACCES, EIO) makes the store unavailable, never "not there".
 */
export async function readPublicFile(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StoreUnavailableError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/** The public folder's key set file. */
export const publicKeySet = (publicDir: string): KeySetOrigin => keySetFile(join(publicDir, KEY_SET_PATH));

/** A file of the public log (`checkpoint`, `tile/...`). */
export const publicLogFile = (publicDir: string, path: string) => readPublicFile(join(publicDir, LOG_DIR, path));

/** The log's verifier key in the public folder. */
export const publicLogVkey = (publicDir: string) => readPublicFile(join(publicDir, LOG_VKEY_PATH));
