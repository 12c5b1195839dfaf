import { constants } from 'node:fs';
import { open, rename, rm, stat, writeFile } from 'node:fs/promises';

/**
 * A cheap token that changes whenever a file is replaced or written: its inode, size and
 * modification time (`missing` when it is not there). Files here are replaced by rename.
 */
export async function fileVersion(file: string): Promise<string> {
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

/** The most bytes a record may have: records are a few hundred bytes; anything near this is not one. */
export const MAX_RECORD_BYTES = 64 * 1024;

/** Why a file is not one a build's bytes may be read from (a link, a FIFO, a folder, a device). */
export class NotARegularFileError extends Error {}

/**
 * At most `length` bytes of a file from byte `start` (fewer at its end), and only from a regular
 * file: a link is refused without being followed (a link can lead out of the build, or to
 * /dev/zero), a FIFO is opened without waiting for a writer and then refused, as are devices and
 * folders, before a byte of them is read. Memory is bounded by `length`. Errors of the file system
 * (ENOENT among them) are thrown as they are.
 */
export async function readRegularRange(file: string, start: number, length: number): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new NotARegularFileError('is a symbolic link, not a regular file');
    throw error;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile())
      throw new NotARegularFileError(
        `is not a regular file (${st.isDirectory() ? 'a folder' : st.isFIFO() ? 'a FIFO' : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : st.isSocket() ? 'a socket' : 'a special file'})`,
      );
    const buffer = Buffer.alloc(Math.max(0, Math.min(length, st.size - start)));
    let filled = 0;
    for (let n; filled < buffer.length && (n = (await handle.read(buffer, filled, buffer.length - filled, start + filled)).bytesRead) > 0; )
      filled += n;
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}
