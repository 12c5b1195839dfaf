import { randomUUID } from 'node:crypto';
import { link, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { StoreUnavailableError } from './errors.ts';

/** A lock older than this is abandoned whoever holds it: a change holds it for milliseconds. */
export const LOCK_STALE_MS = 30_000;
/** How long a change waits for a lock a live process holds before it gives up. */
export const LOCK_WAIT_MS = 10_000;

/** Who holds a lock: written into the lock file before it appears. */
interface Holder {
  pid: number;
  host: string;
  token: string;
}

/**
 * Runs `change` holding the lock `<file>.lock`, so that read-change-rename sequences of several
 * processes on one file never interleave (the later rename would silently drop the earlier
 * change: a created key lost, or a revocation undone). The lock is taken with an exclusive
 * create in one step (the holder is written to a private file that is then hard-linked into
 * place, so no one ever reads an empty lock). A lock is abandoned when its holder is a process of
 * this machine that no longer exists (kill -9), or when it is older than `staleMs` (a holder on
 * another machine sharing the folder); an abandoned lock is removed under a second lock
 * (`<file>.lock.break`), so two processes that both find it abandoned cannot remove a fresh one
 * the other has just taken. Waits with short growing pauses while a live process holds it;
 * after `waitMs`, fails with STORE_UNAVAILABLE naming the lock and its holder.
 */
export async function withFileLock<T>(
  file: string,
  change: () => Promise<T>,
  { waitMs = LOCK_WAIT_MS, staleMs = LOCK_STALE_MS }: { waitMs?: number; staleMs?: number } = {},
): Promise<T> {
  const lock = `${file}.lock`;
  const me: Holder = { pid: process.pid, host: hostname(), token: randomUUID() };
  await take(lock, me, waitMs, staleMs);
  try {
    return await change();
  } finally {
    // Only our own lock: one taken over as abandoned (we outlived staleMs) is someone else's now.
    if ((await holderOf(lock))?.holder?.token === me.token) await unlink(lock).catch(() => undefined);
  }
}

async function take(lock: string, me: Holder, waitMs: number, staleMs: number): Promise<void> {
  const mine = `${lock}.${me.token}`;
  await writeFile(mine, JSON.stringify(me), { mode: 0o600 });
  try {
    const deadline = Date.now() + waitMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
      try {
        await link(mine, lock);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      if (await breakIfAbandoned(lock, staleMs)) continue;
      if (Date.now() > deadline) {
        const holder = (await holderOf(lock))?.holder;
        throw new StoreUnavailableError(`${lock} is held by process ${holder?.pid ?? '(unknown)'} for over ${waitMs / 1000} s; try again`);
      }
      // A random part, so processes that met at the lock do not meet again at the next try.
      await delay(pause + Math.random() * pause);
    }
  } finally {
    await unlink(mine).catch(() => undefined);
  }
}

/** Removes the lock when it is abandoned; true when it is gone (and taking it may be tried at once). */
async function breakIfAbandoned(lock: string, staleMs: number): Promise<boolean> {
  const seen = await holderOf(lock);
  if (!seen) return true;
  if (!abandoned(seen, staleMs)) return false;
  const breaker = `${lock}.break`;
  try {
    await writeFile(breaker, '', { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another process is breaking it now; a breaker lock this old was left by one that died doing so.
    const st = await stat(breaker).catch(() => null);
    if (st && Date.now() - st.mtimeMs > staleMs) await unlink(breaker).catch(() => undefined);
    return false;
  }
  try {
    // Still the very lock judged abandoned (the token is new for every taking), not one taken since.
    const now = await holderOf(lock);
    if (now && now.holder?.token === seen.holder?.token) await unlink(lock).catch(() => undefined);
  } finally {
    await unlink(breaker).catch(() => undefined);
  }
  return true;
}

function abandoned({ holder, ageMs }: { holder: Holder | null; ageMs: number }, staleMs: number): boolean {
  if (ageMs > staleMs) return true;
  return holder !== null && holder.host === hostname() && !isAlive(holder.pid);
}

/** The lock's holder (null when the file does not say) and age; null when there is no lock. */
async function holderOf(lock: string): Promise<{ holder: Holder | null; ageMs: number } | null> {
  try {
    const [text, st] = await Promise.all([readFile(lock, 'utf8'), stat(lock)]);
    let holder: Holder | null = null;
    try {
      holder = JSON.parse(text) as Holder;
    } catch {
      // Not ours to explain: judged by its age alone.
    }
    return { holder, ageMs: Date.now() - st.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Whether a process of this machine exists (signal 0 checks without sending anything; EPERM: it exists, another user's). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
