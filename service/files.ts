import { rename, rm, writeFile } from 'node:fs/promises';

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
