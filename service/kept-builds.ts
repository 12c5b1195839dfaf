import { readFile, readlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { BUILDS_DIR, CURRENT_LINK, KEPT_FILE, MANIFEST_FILE } from '../core/layout.ts';
import { writeAtomic } from './files.ts';

/** A kept build, as `GET /v1/builds` lists it. */
export interface KeptBuild {
  id: string;
  issued_at: string;
  records: number;
  /** The key that signed its records (null: unsigned). */
  key_id: string | null;
}

/** What a build's manifest says about it. */
export async function keptEntry(recordsDir: string, id: string): Promise<KeptBuild> {
  const m = JSON.parse(await readFile(join(recordsDir, BUILDS_DIR, id, MANIFEST_FILE), 'utf8')) as { issued_at: string; records: number; key_id: string | null };
  return { id, issued_at: m.issued_at, records: m.records, key_id: m.key_id ?? null };
}

/**
 * The kept builds, newest first, the live one first: `records/kept.json` as the last build wrote
 * it, with the live build put first if that file missed it (a build stopped between its swap and
 * writing the file). Builds whose folder is gone are left out.
 */
export async function readKept(recordsDir: string): Promise<KeptBuild[]> {
  const listed = await readFile(join(recordsDir, KEPT_FILE), 'utf8')
    .then((text) => (JSON.parse(text) as { builds: KeptBuild[] }).builds)
    .catch(() => [] as KeptBuild[]);
  const target = await readlink(join(recordsDir, CURRENT_LINK)).catch(() => null);
  const live = target ? basename(target) : null;
  const ids = [...new Set([...(live ? [live] : []), ...listed.map((b) => b.id)])];
  const entries = await Promise.all(ids.map((id) => keptEntry(recordsDir, id).catch(() => null)));
  return entries.filter((e): e is KeptBuild => e !== null);
}

export async function writeKept(recordsDir: string, builds: KeptBuild[]): Promise<void> {
  await writeAtomic(join(recordsDir, KEPT_FILE), `${JSON.stringify({ builds }, null, 1)}\n`, 0o644);
}
