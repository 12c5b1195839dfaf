import { randomUUID } from 'node:crypto';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { LockLostError } from './errors/errors.ts';
import { isAbandoned, type LockHolder, processStart } from './file-lock.ts';
import { writeAtomic } from './files.ts';

/**
 * A state file that carries its generation (a member `generation`, 0 when absent), replaced only
 * by `commitGeneration`. A lock (core/file-lock.ts) keeps writers apart while they hold it, but a
 * holder stalled past the stale limit loses its lock without knowing, and a rename is not
 * conditional: a check made before it ("is the lock still mine?", "is the generation still the
 * one I read?") can pass and the process stall right after it, while another writer commits;
 * the late rename then undoes that commit. So the commit's decisive step is one that can succeed
 * for one writer only: creating `<file>.gen-<N+1>` exclusively (the claim of generation N+1).
 */
export interface Generational {
  generation?: number;
}

/** The claim file of generation `n` of `file`. */
const claimOf = (file: string, n: number) => `${file}.gen-${n}`;

/**
 * Replaces `file` with `state` (written by `serialize`) as generation `base + 1`, where `base` is
 * the generation the writer read. Refused with LOCK_LOST (the file unchanged) when another writer
 * committed since: its claim of `base + 1` exists, or the file's generation moved. After the claim,
 * the generation is read once more: a claim of an old generation can be made again once its file
 * is removed (only the newest is kept), and that re-read refuses it, while no writer that read
 * `base` can commit past a claim it cannot make. A claim left by a writer that died before its
 * rename is removed by the next writer that meets it. Returns the state as written.
 */
export async function commitGeneration<S extends Generational>(
  file: string,
  base: number,
  state: S,
  serialize: (state: S) => string,
  read: () => Promise<S>,
  mode = 0o600,
): Promise<S> {
  const next = { ...state, generation: base + 1 };
  const claim = claimOf(file, base + 1);
  const me: LockHolder = { pid: process.pid, host: hostname(), token: randomUUID(), started: processStart(process.pid) };
  const generationNow = async () => (await read()).generation ?? 0;
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(claim, JSON.stringify(me), { flag: 'wx', mode });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if ((await generationNow()) !== base) throw lost(file, base);
    // Claimed, not yet renamed: its writer is between two steps, or died there.
    const holder = await readFile(claim, 'utf8').then(
      (text) => JSON.parse(text) as LockHolder,
      () => null,
    );
    if (attempt > 0 || !holder || !isAbandoned({ holder, ageMs: 0 }, Number.POSITIVE_INFINITY)) throw lost(file, base);
    await unlink(claim).catch(() => undefined);
  }
  try {
    if ((await generationNow()) !== base) throw lost(file, base);
    await writeAtomic(file, serialize(next), mode);
  } catch (error) {
    await unlink(claim).catch(() => undefined);
    throw error;
  }
  await unlink(claimOf(file, base)).catch(() => undefined);
  return next;
}

const lost = (file: string, base: number) =>
  new LockLostError(
    `${file} changed since it was read (generation ${base}) by a writer that took the lock over: nothing was written; try again`,
  );
