import { createHash } from 'node:crypto';
import { readlink, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { canonicalJson } from '#shared';
import { BuildError } from '../core/errors/errors.ts';
import { BUILDS_DIR, CURRENT_LINK } from '../core/layout.ts';

/**
 * A build's id: its `issued_at`, readable, then 12 hex digits of SHA-256 over what the build
 * signs (issuer, schema URL and key, then every record's bytes in the index's order). The same
 * audits, key, options and `--now` give the same id, so a rebuild is byte for byte the same
 * build, statement included; builds that differ in any record differ in id.
 */
export class BuildDigest {
  private readonly hash = createHash('sha256');

  constructor(signs: { issuer: string; schemaUrl: string; keyId: string | null }) {
    this.hash.update(`${canonicalJson(signs)}\n`);
  }

  /** One record's text (`writeIndex` hands each over as it reads it). */
  readonly add = (text: string): void => {
    this.hash.update(`${text}\n`);
  };

  id(issuedAt: string): string {
    return `${issuedAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${this.hash.digest('hex').slice(0, 12)}`;
  }
}

/**
 * Whether the records folder already holds the build `id`: 'live' when it is the live build (the
 * same build made again: one build, nothing to publish), null when it holds no such build. A
 * build of that id that is kept but no longer live is refused: making it live again would
 * append its records to the log a second time and put an older build before a newer one.
 */
export async function existingBuild(recordsDir: string, id: string): Promise<'live' | null> {
  const live = await readlink(join(recordsDir, CURRENT_LINK)).catch(() => null);
  if (live !== null && basename(live) === id) return 'live';
  if (await stat(join(recordsDir, BUILDS_DIR, id)).catch(() => null)) {
    throw new BuildError(
      `build ${id} (these audits, keys, options and --now) was built before and is no longer live; build with another --now to publish it again`,
    );
  }
  return null;
}
