import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats, writeSync } from 'node:fs';
import { type FileHandle, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { READ_LIMITS } from '#shared';

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

/**
 * Writes every byte of `bytes` at the file's position. One `writeSync` may write fewer (a file size
 * limit or a full disk met mid-write) and say so only by its count; the next write then throws
 * (EFBIG, ENOSPC). Unchecked, a build under a file size limit went live with a pack cut short under
 * the name of its whole content.
 */
export function writeAllSync(fd: number, bytes: Uint8Array | string): void {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  for (let at = 0; at < buffer.length; ) at += writeSync(fd, buffer, at, buffer.length - at);
}

/** {@link writeAllSync} through a file handle: every byte of `bytes`, at the file's position. */
export async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length; ) at += (await handle.write(bytes, at, bytes.length - at)).bytesWritten;
}

/** The most bytes a record may have (the limits table's `record`): records are a few hundred bytes; anything near this is not one. */
export const MAX_RECORD_BYTES = READ_LIMITS.record.bytes;

/** Why a file is not one a build's bytes may be read from (a link, a FIFO, a folder, a device). */
export class NotARegularFileError extends Error {}

/** How every store read opens a file: read-only, never through a link in its place, never waiting on a FIFO. */
const OPEN_NO_LINK = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The file kinds a descriptor can name, for the refusal's message. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return st.isSocket() ? 'a socket' : 'a special file';
}

/** The one check of an opened file: a regular file, judged by its descriptor (what was opened), never by its path. */
function checkRegular(st: Stats): void {
  if (!st.isFile()) throw new NotARegularFileError(`is not a regular file (${kindOf(st)})`);
}

/** An open's error as a store tells it: ELOOP is `O_NOFOLLOW` meeting a link in the file's place. */
function linkRefused(error: unknown): unknown {
  return (error as NodeJS.ErrnoException).code === 'ELOOP' ? new NotARegularFileError('is a symbolic link, not a regular file') : error;
}

/**
 * Opens a file without following a link and hands its descriptor and size to `use`: the one way
 * a store reads a file below its live pointer. `O_NOFOLLOW` refuses a link in the file's place
 * (it could lead out of the build, to /etc/passwd or /dev/zero); `O_NONBLOCK` opens a FIFO without
 * waiting for a writer; then the descriptor's fstat must be a regular file, so what is read and
 * sized is what was opened. A link or a special file is NotARegularFileError; errors of the file
 * system (ENOENT among them) are thrown as they are.
 */
export async function withRegularFile<T>(file: string, use: (handle: FileHandle, size: number) => Promise<T>): Promise<T> {
  let handle: FileHandle;
  try {
    handle = await open(file, OPEN_NO_LINK);
  } catch (error) {
    throw linkRefused(error);
  }
  try {
    const st = await handle.stat();
    checkRegular(st);
    return await use(handle, st.size);
  } finally {
    await handle.close();
  }
}

/** Reads `length` bytes at `start` of an opened file, fewer at its end. */
async function readAt(handle: FileHandle, start: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, length));
  let filled = 0;
  for (let n; filled < buffer.length && (n = (await handle.read(buffer, filled, buffer.length - filled, start + filled)).bytesRead) > 0; )
    filled += n;
  return buffer.subarray(0, filled);
}

/**
 * At most `length` bytes of a file from byte `start` (fewer at its end), and only from a regular
 * file ({@link withRegularFile}): a link, a FIFO, a device or a folder is refused before a byte of
 * it is read. Memory is bounded by `length`.
 */
export function readRegularRange(file: string, start: number, length: number): Promise<Buffer> {
  return withRegularFile(file, (handle, size) => readAt(handle, start, Math.min(length, size - start)));
}

/**
 * A regular file's bytes whole ({@link withRegularFile}), refused unread with `tooLarge()` when its
 * descriptor says it has more than `maxBytes`; a file that grows while it is read is read to the
 * size it had, so memory stays bounded.
 */
export function readRegularFile(file: string, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  return withRegularFile(file, (handle, size) => {
    if (size > maxBytes) throw tooLarge();
    return readAt(handle, 0, size);
  });
}

/** The size of a regular file, from its descriptor ({@link withRegularFile}): a link's target is never sized. */
export function regularFileSize(file: string): Promise<number> {
  return withRegularFile(file, async (_handle, size) => size);
}

/** {@link readRegularFile} for what is read once at start-up, before anything is served (a mirror's `mirror.json`). */
export function readRegularFileSync(file: string, maxBytes: number, tooLarge: () => Error): Buffer {
  let fd: number;
  try {
    fd = openSync(file, OPEN_NO_LINK);
  } catch (error) {
    throw linkRefused(error);
  }
  try {
    const st = fstatSync(fd);
    checkRegular(st);
    if (st.size > maxBytes) throw tooLarge();
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
