/**
 * File walking for the security suites, independent of the records layout (which may change):
 * every regular file under a folder, following the `current` symlink of a records folder once.
 */
import { readdir, readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { CURRENT_LINK, MANIFEST_FILE } from '../../core/layout.ts';

/** Every regular file under `dir` (recursively), by absolute path; symlinks are resolved, each real file listed once. */
export async function allFiles(dir: string): Promise<string[]> {
  const seen = new Set<string>();
  const walk = async (abs: string): Promise<void> => {
    const real = await realpath(abs).catch(() => null);
    if (real === null || seen.has(real)) return;
    seen.add(real);
    for (const e of await readdir(abs, { withFileTypes: true })) {
      const p = join(abs, e.name);
      if (e.isDirectory() || e.isSymbolicLink()) {
        const target = await realpath(p).catch(() => null);
        if (target === null) continue;
        const entries = await readdir(target).catch(() => null);
        if (entries === null) {
          if (!seen.has(target)) {
            seen.add(target);
            files.push(target);
          }
          continue;
        }
        await walk(p);
      } else if (e.isFile()) {
        const r = await realpath(p);
        if (!seen.has(r)) {
          seen.add(r);
          files.push(r);
        }
      }
    }
  };
  const files: string[] = [];
  await walk(dir);
  return files;
}

/** The live build's records by their `domain` member (the stored bytes), wherever the layout puts them. */
export async function liveRecordBytes(recordsDir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const file of await allFiles(join(recordsDir, CURRENT_LINK))) {
    if (!file.endsWith('.json') || file.endsWith(`/${MANIFEST_FILE}`)) continue;
    const bytes = await readFile(file);
    const domain = (JSON.parse(bytes.toString('utf8')) as { domain?: unknown }).domain;
    if (typeof domain === 'string') out.set(domain, bytes);
  }
  return out;
}
