import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { LockHeldError } from './errors/errors.ts';

// The one lock module: the build's lock (builder/swap.ts), the API key file's (access/api-keys.ts)
// and a witness's state folder (witness/server/state.ts) are taken, judged and broken here.

/** A lock older than this is abandoned whoever holds it (a change of the API key file holds it for milliseconds). */
export const LOCK_STALE_MS = 30_000;
/** How long a change waits for a lock a live process holds before it gives up. */
export const LOCK_WAIT_MS = 10_000;

/** How a lock is taken: how long to wait for a live holder, and after how long a holder is abandoned whatever it is. */
export interface LockSettings {
  /** 0: fail at once when a live process holds it. */
  waitMs?: number;
  /** Infinity: a holder is abandoned only when it is gone (a build or a witness holds its lock for as long as it runs). */
  staleMs?: number;
}

/**
 * Who holds a lock: written into the lock file before it appears. `started` is the holder's start
 * time as /proc/PID/stat gives it (clock ticks since boot; null where there is no /proc): a pid
 * that is alive but started at another time is another process that got the pid after the holder died.
 */
export interface LockHolder {
  pid: number;
  host: string;
  token: string | null;
  started: string | null;
}

/** A lock this process holds. */
export interface HeldLock {
  readonly path: string;
  readonly token: string;
  /** Removes the lock if it is still this one (a lock broken as abandoned meanwhile is someone else's now). */
  release(): Promise<void>;
}

/** Tokens of the locks this process holds: a lock naming our pid with another token is a leftover, never ours. */
const held = new Set<string>();

/** The start time of a process of this machine (field 22 of /proc/PID/stat), or null where that cannot be read. */
export function processStart(pid: number): string | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: fields are counted after its closing one.
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

const ownStart = processStart(process.pid);

/**
 * Takes the lock at `path` (a file created in one step: the holder is written to a private file
 * that is then hard-linked into place, so no one ever reads an empty lock). A lock whose holder is
 * abandoned (see `isAbandoned`) is broken by exactly one taker, and only if it is still the very
 * lock that taker judged (same token): see `breakLock`. Waits with short
 * growing pauses while a live process holds it; after `waitMs` fails STORE_UNAVAILABLE naming the
 * lock and its holder.
 */
export async function takeLock(path: string, { waitMs = LOCK_WAIT_MS, staleMs = LOCK_STALE_MS }: LockSettings = {}): Promise<HeldLock> {
  const me: LockHolder = { pid: process.pid, host: hostname(), token: randomUUID(), started: ownStart };
  const token = me.token as string;
  const mine = `${path}.${token}`;
  try {
    await writePrivate(mine, JSON.stringify(me));
    const deadline = Date.now() + waitMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
      try {
        await link(mine, path);
        held.add(token);
        return { path, token, release: () => release(path, token, staleMs) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const seen = await lockAt(path);
      if (!seen || (isAbandoned(seen, staleMs) && (await breakLock(path, seen.id)))) continue;
      if (Date.now() >= deadline) throw new LockHeldError(path, seen.holder?.pid ?? null, waitMs);
      // A random part, so processes that met at the lock do not meet again at the next try.
      await delay(pause + Math.random() * pause);
    }
  } finally {
    await unlink(mine).catch(() => undefined);
  }
}

/**
 * Writes the holder's private file, synced before it is linked into place: after a power cut a lock
 * is whole or absent, never an empty file that names no one and so could only be judged by its age.
 */
async function writePrivate(file: string, text: string): Promise<void> {
  const fh = await open(file, 'wx', 0o600);
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Runs `change` holding the lock `<file>.lock`, so that read-change-rename sequences of several
 * processes on one file do not interleave. A holder stalled past `staleMs` loses the lock: what
 * it then writes must be refused by the state itself (`commitGeneration`), which no lock can do.
 */
export async function withFileLock<T>(file: string, change: () => Promise<T>, settings: LockSettings = {}): Promise<T> {
  const lock = await takeLock(`${file}.lock`, settings);
  try {
    return await change();
  } finally {
    await lock.release();
  }
}

/** A lock file as found: its holder (null when the file does not say), its age and what identifies this very lock. */
interface SeenLock {
  holder: LockHolder | null;
  ageMs: number;
  /** The holder's token, or for a lock that carries none, its inode: what a breaker checks it moved. */
  id: string;
}

async function lockAt(path: string): Promise<SeenLock | null> {
  try {
    const [text, st] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    const holder = parseHolder(text);
    return { holder, ageMs: Date.now() - st.mtimeMs, id: holder?.token ?? `inode ${st.ino}` };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** A holder as written by this module, or a bare pid as locks of earlier versions held (this machine's, no token). */
function parseHolder(text: string): LockHolder | null {
  if (/^\d+\s*$/.test(text)) return { pid: Number(text), host: hostname(), token: null, started: null };
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (!Number.isSafeInteger(h.pid) || typeof h.host !== 'string') return null;
    return { pid: h.pid as number, host: h.host, token: typeof h.token === 'string' ? h.token : null, started: h.started ?? null };
  } catch {
    return null; // Not ours to explain: judged by its age alone.
  }
}

/**
 * Whether a lock's holder is gone: older than `staleMs` whoever holds it (a holder on another
 * machine sharing the folder, or one stalled); else, for a holder of this machine, when its pid no
 * longer exists, when the pid is alive but started at another time than the holder did (the pid
 * was reused), or when it names this process with a token this process does not hold.
 */
export function isAbandoned({ holder, ageMs }: { holder: LockHolder | null; ageMs: number }, staleMs: number): boolean {
  if (ageMs >= staleMs) return true;
  if (holder === null || holder.host !== hostname()) return false;
  if (holder.pid === process.pid) return holder.token !== null && !held.has(holder.token);
  if (!isAlive(holder.pid)) return true;
  const started = holder.started === null ? null : processStart(holder.pid);
  return started !== null && started !== holder.started;
}

/**
 * Removes the lock at `path` if it is still the one identified by `id`. Every removal of a lock,
 * a break or its holder's release, happens holding `<path>.break-<id>`, itself a lock of this
 * module taken without waiting: of several processes that judged the same lock abandoned exactly
 * one holds it, and while it does the lock it reads cannot be replaced, since replacing it means
 * removing it first. One that found it taken goes back to trying the lock. A breaker that died
 * holding its break lock leaves a lock abandoned in turn, broken the same way. True when the lock
 * is gone.
 */
async function breakLock(path: string, id: string): Promise<boolean> {
  let breaking: HeldLock;
  try {
    breaking = await takeLock(`${path}.break-${id.replace(/[^A-Za-z0-9-]/g, '-')}`, { waitMs: 0, staleMs: Number.POSITIVE_INFINITY });
  } catch (error) {
    if (error instanceof LockHeldError) return false;
    throw error;
  }
  try {
    const now = await lockAt(path);
    if (now?.id === id) await unlink(path);
    return now === null || now.id === id;
  } finally {
    await breaking.release();
  }
}

/**
 * Removes a lock this process took, if it still is that lock. One that can go stale by its age may
 * have been broken and taken meanwhile, so it is removed as a break is; one that is abandoned only
 * with its holder cannot have been, as long as we are here to release it.
 */
async function release(path: string, token: string, staleMs: number): Promise<void> {
  held.delete(token);
  if (Number.isFinite(staleMs)) await breakLock(path, token);
  else if ((await lockAt(path))?.id === token) await unlink(path).catch(() => undefined);
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
