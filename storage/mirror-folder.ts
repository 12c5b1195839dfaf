import { join } from 'node:path';
import { type KeySet, parseKeySet } from '@merchant-verify/verifier';
import { ConfigError, ReadTooLargeError } from '../core/errors.ts';
import { readRegularFileSync } from '../core/files.ts';
import { MIRROR_FILE, MIRROR_PUBLIC_DIR } from '../core/layout.ts';
import { READ_LIMITS } from '../core/limits.ts';
import { isHttp, isS3 } from './url.ts';

/** What a mirror folder (`mvr mirror --to DIR`) says about itself: where its public files are, and the record keys it trusted. */
export interface MirrorFolder {
  /** `DIR/public`, the live build's key set, log key and the log files of its statement's proof. */
  publicDir: string;
  /** The keys the mirror checked its builds with: pinned by `mvr serve` and `mvr verify --mirror` on it. */
  trustedKeys: KeySet;
  /** Where it is mirrored from. */
  from: string;
  /** The issuer of its builds: a gateway on it answers under that name unless told another. */
  issuer: string | null;
}

/**
 * The mirror a records folder is, or null when it is not one (no `mirror.json`): read once, at
 * start-up, by the commands that answer from it. A `mirror.json` that cannot be read or holds no
 * key set is INVALID_CONFIG naming it.
 */
export function mirrorFolderOf(dir: string): MirrorFolder | null {
  if (isS3(dir) || isHttp(dir)) return null;
  const file = join(dir, MIRROR_FILE);
  let text: string;
  try {
    // Never through a link, as every file of a records folder is read; a manifest's limit, as it is one.
    const { bytes } = READ_LIMITS.manifest;
    text = readRegularFileSync(file, bytes, () => new ReadTooLargeError('manifest', bytes)).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw new ConfigError(`${file} cannot be read: ${(error as Error).message}`);
  }
  let mirror: { from?: unknown; issuer?: unknown; trusted_keys?: unknown };
  let trustedKeys: KeySet;
  try {
    mirror = JSON.parse(text) as typeof mirror;
    trustedKeys = parseKeySet(mirror.trusted_keys);
  } catch (error) {
    throw new ConfigError(`${file} is not a mirror's: ${(error as Error).message}`);
  }
  if (trustedKeys.keys.length === 0) throw new ConfigError(`${file} is not a mirror's: trusted_keys lists no key`);
  const { from, issuer } = mirror;
  return { publicDir: join(dir, MIRROR_PUBLIC_DIR), trustedKeys, from: String(from), issuer: typeof issuer === 'string' ? issuer : null };
}
