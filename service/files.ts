import { rename, rm, stat, writeFile } from 'node:fs/promises';

/**
 * A cheap token that changes whenever a file is replaced or written: its inode, size and
 * modification time (`missing` when it is not there). Files here are replaced by rename.
 */
export async function fileSignature(file: string): Promise<string> {
  const st = await stat(file).catch(() => null);
  return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : 'missing';
}

/** Writes a file by rename, so readers see the old or the new content, never a torn one. */
export async function writeAtomic(file: string, content: string | Uint8Array, mode = 0o644): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    await writeFile(tmp, content, { mode });
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw error;
  }
}
