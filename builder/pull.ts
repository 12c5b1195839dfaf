import { lstat, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BuildError } from '../core/errors/errors.ts';
import { BUILD_STATEMENT_FILE, BUILDS_DIR, CURRENT_LINK, DOMAIN_MAP_FILE, INDEX_FILE, MANIFEST_FILE } from '../core/layout.ts';
import { type KeptBuild, writeKept } from '../storage/kept-builds.ts';
import type { Store } from '../storage/store.ts';

export interface PullSummary {
  from: string;
  to: string;
  /** The bucket's live build. */
  live: string;
  builds: number;
  bytes: number;
}

/**
 * Brings what the next build reads of the builds published in a bucket into an empty records
 * folder: the kept list, and each kept build's manifest and index (not its records). With them a
 * build on a fresh machine (CI) keeps the bucket's builds in its kept list, keeps their keys in
 * the key set, and writes the change feed against each; `mvr publish` then uploads only the new
 * build, since the bucket has the others. The folder gets no `current` link: it is for building,
 * never for serving (its earlier builds have no records).
 */
export async function pullKeptBuilds(opts: {
  recordsDir: string;
  from: Store;
  onProgress?: (p: { builds: number; total: number; bytes: number }) => void;
}): Promise<PullSummary> {
  const { from } = opts;
  if (await lstat(join(opts.recordsDir, CURRENT_LINK)).catch(() => null)) {
    throw new BuildError(`${opts.recordsDir} already has a live build; pull the published builds into an empty records folder`);
  }
  await from.refresh();
  const live = from.liveBuild();
  if (!live) throw new BuildError(`cannot pull from ${from.name}: ${from.describe().error ?? 'it names no live build'}`);
  let kept: KeptBuild[];
  try {
    kept = await from.keptBuilds();
  } catch (error) {
    throw new BuildError(`cannot read the kept builds of ${from.name}: ${(error as Error).message}`, { cause: error });
  }
  let bytes = 0;
  let done = 0;
  opts.onProgress?.({ builds: 0, total: kept.length, bytes });
  for (const { id } of kept) {
    const dir = join(opts.recordsDir, BUILDS_DIR, id);
    await mkdir(dir, { recursive: true });
    // The index first, the manifest last: a build folder with a manifest is complete here.
    // The domain map and its statement go with the build, so a later publish carries them on.
    for (const file of [INDEX_FILE, DOMAIN_MAP_FILE, BUILD_STATEMENT_FILE, MANIFEST_FILE]) {
      const body = await from.readFile(id, file).catch((error: Error) => {
        throw new BuildError(`cannot read ${from.name}/${BUILDS_DIR}/${id}/${file}: ${error.message}`, { cause: error });
      });
      if (!body) throw new BuildError(`${from.name}/${BUILDS_DIR}/${id}/${file} is missing: the bucket's build ${id} is incomplete`);
      await writeFile(join(dir, file), body);
      bytes += body.length;
    }
    opts.onProgress?.({ builds: ++done, total: kept.length, bytes });
  }
  await writeKept(opts.recordsDir, kept);
  return { from: from.name, to: opts.recordsDir, live, builds: kept.length, bytes };
}
