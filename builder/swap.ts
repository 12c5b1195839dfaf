import { type Dir, opendirSync, rmdirSync, unlinkSync } from 'node:fs';
import { mkdir, readdir, readlink, rename, rm, rmdir, symlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { BuildError, LockHeldError } from '../core/errors/errors.ts';
import { type HeldLock, takeLock } from '../core/file-lock.ts';
import { BUILDS_DIR, CURRENT_LINK } from '../core/layout.ts';

const LOCK = '.build.lock';
const STAGING_PREFIX = '.staging-';

/**
 * Takes the records folder's build lock (core/file-lock.ts, never waited for), so two builds never
 * interleave their swaps. A build holds it for as long as it runs, so it is abandoned only when its
 * holder is gone (no process with its pid, or the pid reused since), never for its age: a live
 * build never loses it, and so never swaps over a build that went live after it took it. Releasing
 * it also removes the folders taking it made, if a failed build left them empty (a first build
 * that failed).
 */
export async function acquireBuildLock(recordsDir: string): Promise<() => Promise<void>> {
  const made = await mkdir(join(recordsDir, BUILDS_DIR), { recursive: true });
  const removeIfEmpty = async () => made && removeEmptyFolders(join(recordsDir, BUILDS_DIR), made);
  const file = join(recordsDir, LOCK);
  let lock: HeldLock;
  try {
    lock = await takeLock(file, { waitMs: 0, staleMs: Number.POSITIVE_INFINITY });
  } catch (error) {
    await removeIfEmpty();
    if (error instanceof LockHeldError) throw new BuildError(`another build (pid ${error.holderPid ?? 'unknown'}) holds ${file}`);
    throw new BuildError(`cannot create ${file}: ${(error as Error).message}`);
  }
  return async () => {
    await lock.release();
    await removeIfEmpty();
  };
}

/** Makes a fresh staging folder inside the records folder (same file system, so the final rename is atomic). */
export async function createStaging(recordsDir: string): Promise<string> {
  const builds = join(recordsDir, BUILDS_DIR);
  // Staging folders of builds that died (kill -9, power loss) are garbage; the lock says none is running.
  for (const name of await readdir(builds)) {
    if (name.startsWith(STAGING_PREFIX)) await removeTree(join(builds, name));
  }
  const dir = join(builds, `${STAGING_PREFIX}${process.pid}-${Date.now()}`);
  await mkdir(dir);
  return dir;
}

/**
 * Makes a finished staging folder the live build: renames it to `builds/<id>`, then atomically repoints
 * the `current` symlink (rename over the old link). A reader sees the old build or the new
 * one, never a mix; a crash before the rename leaves the old build live.
 */
export async function swapInBuild(
  recordsDir: string,
  stagingDir: string,
  buildId: string,
): Promise<{ buildDir: string; previous: string | null }> {
  const target = join(recordsDir, BUILDS_DIR, buildId);
  await rename(stagingDir, target);
  const link = join(recordsDir, CURRENT_LINK);
  const previous = await readlink(link).catch(() => null);
  const tmpLink = `${link}.tmp-${process.pid}`;
  await rm(tmpLink, { force: true });
  await symlink(join(BUILDS_DIR, buildId), tmpLink, 'dir');
  try {
    await rename(tmpLink, link);
  } catch (error) {
    await rm(tmpLink, { force: true });
    await rename(target, stagingDir).catch(() => undefined); // back to staging, which the failed build removes
    throw new BuildError(`cannot replace ${link} (is it a folder rather than a symlink?): ${(error as Error).message}`);
  }
  return { buildDir: target, previous: previous && basename(previous) };
}

/** The id of the live build (where `current` points), or null before the first build. */
export async function liveBuildId(recordsDir: string): Promise<string | null> {
  const target = await readlink(join(recordsDir, CURRENT_LINK)).catch(() => null);
  return target && basename(target);
}

/**
 * Removes every build but the live one and the one that was live before it (readers in flight
 * may still be reading that). Which builds those are comes from the link, never from sorting
 * names: a rebuild with an earlier `--now` is still the newest build.
 */
export async function pruneBuilds(recordsDir: string, keep: (string | null)[]): Promise<string[]> {
  const builds = join(recordsDir, BUILDS_DIR);
  const live = await liveBuildId(recordsDir);
  const kept = new Set([...keep, live].filter((n): n is string => Boolean(n)));
  const old = (await readdir(builds)).filter((n) => !n.startsWith('.') && !kept.has(n));
  for (const name of old) await removeTree(join(builds, name));
  return old;
}

/** Removes `dir`, then each parent up to and including `top`, while they are empty (what a failed build made). */
export async function removeEmptyFolders(dir: string, top: string): Promise<void> {
  for (let d = dir; d.length >= top.length; d = dirname(d)) {
    if (
      !(await rmdir(d).then(
        () => true,
        () => false,
      ))
    )
      return; // not empty (or gone): what is above it stays
  }
}

/** Removes a staging folder after a failed build. */
export async function discardStaging(stagingDir: string): Promise<void> {
  await removeTree(stagingDir);
}

/**
 * Removes a folder and everything in it with memory bounded by one directory's entries at a time
 * (entries are streamed, never listed whole). fs.rm with `recursive` held about 1.9 GB removing a
 * million-record build. A symlink is removed, never followed. A missing folder is not an error.
 * Each folder's files are unlinked synchronously (a shard holds a few thousand at 1M records),
 * and the event loop gets a turn between folders.
 */
export async function removeTree(path: string): Promise<void> {
  let dir: Dir;
  try {
    dir = opendirSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') return unlinkSync(path);
    throw error;
  }
  const subfolders: string[] = [];
  try {
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) subfolders.push(child);
      else unlinkSync(child);
    }
  } finally {
    dir.closeSync();
  }
  for (const child of subfolders) {
    await new Promise((resolve) => setImmediate(resolve));
    await removeTree(child);
  }
  rmdirSync(path);
}
