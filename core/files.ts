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

/** Why a file is not one a record may be read from. */
export class NotARecordFileError extends Error {}

/**
 * Reads a record file, and only a regular file of at most `max` bytes: a link is refused without
 * being followed (a record never is one, and a link can lead out of the build, or to /dev/zero),
 * a FIFO is opened without waiting for a writer and then refused, as are devices, folders and
 * larger (sparse) files, before a byte of them is read. Memory is bounded by `max` whatever the
 * file. Errors of the file system (ENOENT among them) are thrown as they are.
 */
export async function readRegularFile(file: string, max = MAX_RECORD_BYTES): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new NotARecordFileError('is a symbolic link, not a regular file');
    throw error;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile())
      throw new NotARecordFileError(
        `is not a regular file (${st.isDirectory() ? 'a folder' : st.isFIFO() ? 'a FIFO' : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : st.isSocket() ? 'a socket' : 'a special file'})`,
      );
    if (st.size > max) throw new NotARecordFileError(`has ${st.size} bytes, more than the ${max} a record may have`);
    // Read one byte past the size seen, to notice a file that grew since.
    const buffer = Buffer.alloc(Math.min(st.size + 1, max + 1));
    let filled = 0;
    for (let n; filled < buffer.length && (n = (await handle.read(buffer, filled, buffer.length - filled, filled)).bytesRead) > 0; )
      filled += n;
    if (filled > max) throw new NotARecordFileError(`has more than the ${max} bytes a record may have`);
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}
