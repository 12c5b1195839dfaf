import { readlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { writeAtomic } from '../core/files.ts';
import { BUILD_ID, BUILDS_DIR, CURRENT_LINK, KEPT_FILE, MANIFEST_FILE } from '../core/layout.ts';
import type { KeptBuildEntry } from '../core/schemas/history.ts';
import { parseManifest } from '../core/schemas/manifest.ts';
import { readWithinLimit } from './public-files.ts';

/** A kept build as `kept.json` holds it: what `GET /v1/builds` lists, and the key that signed its records (null: unsigned). */
export type KeptBuild = KeptBuildEntry & { key_id: string | null };

/** What a build's manifest says about it. */
function entryOf(id: string, manifest: Buffer | string): KeptBuild {
  const m = parseManifest(manifest, `${BUILDS_DIR}/${id}/${MANIFEST_FILE}`);
  return { id, issued_at: m.issued_at, records: m.records, key_id: m.key_id };
}

/** What a build's manifest in a records folder says about it. */
export async function keptEntry(recordsDir: string, id: string): Promise<KeptBuild> {
  return entryOf(id, await readWithinLimit(join(recordsDir, BUILDS_DIR, id, MANIFEST_FILE)));
}

/**
 * The kept list as `kept.json` holds it; one that is not a list counts as empty (the live build
 * still comes first). Ids become paths and object keys, so only well-formed ones are taken.
 */
export function parseKeptList(text: Buffer | string): KeptBuild[] {
  try {
    const builds = (JSON.parse(text.toString()) as { builds?: unknown }).builds;
    return Array.isArray(builds) ? (builds as KeptBuild[]).filter((b) => typeof b?.id === 'string' && BUILD_ID.test(b.id)) : [];
  } catch {
    return [];
  }
}

/** The text of `kept.json`, in the records folder and in a bucket alike. */
export const keptListText = (builds: KeptBuild[]) => `${JSON.stringify({ builds }, null, 1)}\n`;

/**
 * The kept builds, newest first, the live one first, wherever builds are stored: the list as the
 * last build wrote it, with the live build put first if the list missed it (a build stopped
 * between its swap and writing the list). Each entry is what the build's own manifest says;
 * builds whose manifest is gone (`manifest` gives null) are left out. A manifest that cannot be
 * read at all is the caller's error to throw, not a build to leave out.
 */
export async function keptBuilds(
  live: string | null,
  listed: KeptBuild[],
  manifest: (id: string) => Promise<Buffer | null>,
): Promise<KeptBuild[]> {
  const ids = [...new Set([...(live ? [live] : []), ...listed.map((b) => b.id)])];
  const entries = await Promise.all(
    ids.map(async (id) => {
      const bytes = await manifest(id);
      if (!bytes) return null;
      try {
        return entryOf(id, bytes);
      } catch {
        return null;
      }
    }),
  );
  return entries.filter((e): e is KeptBuild => e !== null);
}

/**
 * The kept builds of a records folder (`records/kept.json`), `live` first (by default the build
 * `records/current` names: the live pointer, the one link a records folder has). The list and the
 * manifests are read as every store file is, never through a link.
 */
export async function readKept(recordsDir: string, live?: string): Promise<KeptBuild[]> {
  const listed = await readWithinLimit(join(recordsDir, KEPT_FILE)).then(parseKeptList, () => []);
  const target = live ?? (await readlink(join(recordsDir, CURRENT_LINK)).then(basename, () => null));
  return keptBuilds(target, listed, (id) => readWithinLimit(join(recordsDir, BUILDS_DIR, id, MANIFEST_FILE)).catch(() => null));
}

export async function writeKept(recordsDir: string, builds: KeptBuild[]): Promise<void> {
  await writeAtomic(join(recordsDir, KEPT_FILE), keptListText(builds), 0o644);
}
