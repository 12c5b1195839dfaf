import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { KEY_SET_PATH, type KeySet } from '@merchant-verify/verifier';
import { packIndexBytes } from '#shared';
import { writeAtomic } from '../core/files.ts';
import {
  BUILD_CHECKPOINT_FILE,
  BUILD_SERVED_CHECKPOINT_FILE,
  BUILD_STATEMENT_FILE,
  CURRENT_LINK,
  DOMAIN_MAP_FILE,
  LOG_CHECKPOINT,
  LOG_DIR,
  LOG_VKEY_PATH,
  MANIFEST_FILE,
  MIRROR_FILE,
  MIRROR_PUBLIC_DIR,
  PACK_INDEX_FILE,
} from '../core/layout.ts';

/**
 * What a mirrored build folder holds besides its packs and the files derived from them (the pack
 * index, the lookup index), which the mirror writes itself: every part checked (or, for the
 * unsigned ones, checked where it is used).
 */
export interface MirroredFiles {
  statement: Buffer;
  domainMap: Buffer;
  manifest: Buffer;
  ownCheckpoint: Buffer;
  servedCheckpoint: Buffer | null;
  /** The key set the statement verified against, as published with the build. */
  keySet: Buffer;
  /** The log key the statement's proof verified against, in note form. */
  logVkey: string;
  /** The checkpoint the statement and the records are proven against. */
  checkpoint: string;
}

/**
 * Writes a mirrored build's files into its staging folder, as `mvr build` lays a build out, and
 * under `public/` what serving it offline needs: the key set, the log key and the checkpoint
 * (served at `/log/...` from the mirror); the tiles follow once the records are checked ({@link writeLogTiles}).
 */
export async function writeBuildFiles(stagingDir: string, f: MirroredFiles): Promise<void> {
  const files: [string, Uint8Array | string][] = [
    [BUILD_STATEMENT_FILE, f.statement],
    [DOMAIN_MAP_FILE, f.domainMap],
    [BUILD_CHECKPOINT_FILE, f.ownCheckpoint],
    ...(f.servedCheckpoint ? [[BUILD_SERVED_CHECKPOINT_FILE, f.servedCheckpoint] as [string, Buffer]] : []),
    [join(MIRROR_PUBLIC_DIR, KEY_SET_PATH), f.keySet],
    [join(MIRROR_PUBLIC_DIR, LOG_VKEY_PATH), `${f.logVkey.trim()}\n`],
    [join(MIRROR_PUBLIC_DIR, LOG_DIR, LOG_CHECKPOINT), f.checkpoint],
  ];
  for (const [path, bytes] of files) {
    await mkdir(dirname(join(stagingDir, path)), { recursive: true });
    await writeFile(join(stagingDir, path), bytes);
  }
}

/** The log's tiles the statement's and the records' proofs read (each checked by a proof), under `public/log/`. */
export async function writeLogTiles(stagingDir: string, tiles: Map<string, Uint8Array>): Promise<void> {
  for (const [path, bytes] of tiles) {
    const file = join(stagingDir, MIRROR_PUBLIC_DIR, LOG_DIR, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, bytes);
  }
}

/** The pack index, rebuilt from the checked packs' record ends, and the manifest, written last: a build folder with a manifest is complete. */
export async function finishBuildFolder(stagingDir: string, ends: Uint32Array, manifest: Buffer): Promise<void> {
  await writeFile(join(stagingDir, PACK_INDEX_FILE), packIndexBytes(ends));
  await writeFile(join(stagingDir, MANIFEST_FILE), manifest);
}

/**
 * Marks the folder a mirror (`mirror.json`: where from, and the record keys it trusted, which
 * `mvr serve` and `mvr verify --mirror` pin on it), and links `public` to the live build's public
 * files, so the key set and the log go live with the build in the one swap of `current`.
 */
export async function markMirror(dir: string, mirror: { from: string; issuer: string; trustedKeys: KeySet }): Promise<void> {
  const { from, issuer, trustedKeys } = mirror;
  await writeAtomic(join(dir, MIRROR_FILE), `${JSON.stringify({ from, issuer, trusted_keys: trustedKeys }, null, 1)}\n`);
  await symlink(join(CURRENT_LINK, MIRROR_PUBLIC_DIR), join(dir, MIRROR_PUBLIC_DIR), 'dir').catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
}
