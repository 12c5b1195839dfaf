import { createHash } from 'node:crypto';

/**
 * Where a domain's record lives inside a build: `ab/cd/<domain>.json`, where `abcd` are the
 * first two bytes of SHA-256(domain) in hex. 65,536 shards keep every directory small at 10M
 * domains (about 150 files each) and the path is computed, never listed. The domain is already
 * normalized (`[a-z0-9.-]`), so it cannot climb out of the shard.
 *
 * Reproduce by hand: `printf %s example.com | sha256sum | cut -c1-4`.
 */
export function recordPath(domain: string): string {
  const h = createHash('sha256').update(domain).digest('hex');
  return `${h.slice(0, 2)}/${h.slice(2, 4)}/${domain}.json`;
}

/** Name of the symlink inside the records folder that points at the live build. */
export const CURRENT_LINK = 'current';
/** Folder inside the records folder that holds the builds. */
export const BUILDS_DIR = 'builds';
/** Manifest written at the top of every build. */
export const MANIFEST_FILE = 'manifest.json';
