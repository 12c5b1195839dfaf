import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256 } from '../../core/crypto/hash.ts';
import { ConfigError, LockHeldError } from '../../core/errors/errors.ts';
import { type HeldLock, takeLock } from '../../core/file-lock.ts';

/** The lock file of a state folder: the process that owns it (core/file-lock.ts). */
export const STATE_LOCK_FILE = 'witness.lock';

/** What a witness keeps of one log: the latest checkpoint it cosigned, with that cosignature. */
export interface OriginState {
  size: number;
  /** The root hash, base64. */
  root: string;
  /** The checkpoint as cosigned: its text, the log's signature lines, the witness's cosignature. */
  checkpoint: string;
}

/** The file name of a log's state: SHA-256 of its origin in lowercase hex, as the monitoring path names it. */
export const originHash = (origin: string) => Buffer.from(sha256(new TextEncoder().encode(origin))).toString('hex');

/**
 * A witness's state, a folder with one JSON file per log. Each update runs under the log's lock,
 * from reading the stored size to the renamed file: two requests for one log are checked and
 * stored one after the other, so a slower, smaller one can never roll back a larger one
 * (c2sp.org/tlog-witness asks for exactly this). A file is replaced whole (temporary file,
 * fsync, rename, fsync of the folder) before the answer goes out, so after a crash or a power cut
 * the state is the old one or the new one, never a size older than one cosigned. One process owns
 * the folder: `open` takes its lock file (`witness.lock`), and a second process on the same
 * folder refuses to start while the owner lives, so two can never both cosign.
 */
export class WitnessState {
  private readonly locks = new Map<string, Promise<unknown>>();
  private lock: HeldLock | null = null;
  constructor(readonly dir: string) {}

  /**
   * Creates the folder if needed and takes its lock (core/file-lock.ts, never waited for);
   * INVALID_CONFIG while another live process holds it. The lock is abandoned only when its holder
   * is gone (no process with its pid, or the pid reused since), never for its age: a witness holds
   * it for as long as it runs, so a live one never loses it to a second that would then cosign.
   */
  async open(): Promise<this> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, STATE_LOCK_FILE);
    try {
      this.lock = await takeLock(path, { waitMs: 0, staleMs: Number.POSITIVE_INFINITY });
    } catch (error) {
      if (error instanceof LockHeldError)
        throw new ConfigError(
          `--state ${this.dir} is in use by process ${error.holderPid ?? '(unknown)'} (its ${STATE_LOCK_FILE}): one witness process owns a state folder, or two could cosign conflicting checkpoints`,
        );
      throw new ConfigError(`cannot take the lock ${path}: ${(error as Error).message}`);
    }
    await syncDir(this.dir);
    return this;
  }

  /** Gives the lock back (the server closing). */
  async close(): Promise<void> {
    const lock = this.lock;
    this.lock = null;
    await lock?.release();
  }

  /** The stored state of the log with this origin hash; null when the witness never cosigned for it. */
  async readByHash(hash: string): Promise<OriginState | null> {
    const text = await readFile(join(this.dir, `${hash}.json`), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    return text === null ? null : (JSON.parse(text) as OriginState);
  }

  /**
   * Runs `step` with the log's stored state under its lock; when it returns a next state, that is
   * stored (durably) before the result is given back.
   */
  update<T>(origin: string, step: (current: OriginState | null) => { next?: OriginState; result: T }): Promise<T> {
    const hash = originHash(origin);
    const run = async () => {
      const { next, result } = step(await this.readByHash(hash));
      if (next) await this.write(hash, next);
      return result;
    };
    const previous = this.locks.get(hash) ?? Promise.resolve();
    const current = previous.then(run, run);
    const settled = current.catch(() => undefined);
    this.locks.set(hash, settled);
    void settled.then(() => {
      if (this.locks.get(hash) === settled) this.locks.delete(hash);
    });
    return current;
  }

  private async write(hash: string, state: OriginState): Promise<void> {
    const file = join(this.dir, `${hash}.json`);
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    const fh = await open(temp, 'wx', 0o600);
    try {
      await fh.writeFile(`${JSON.stringify(state)}\n`);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(temp, file);
    // The rename is durable only once the folder's entry is: without this a power cut can bring back the older file.
    await syncDir(this.dir);
  }
}

/** fsync of a folder, so the entries created or renamed in it survive a power cut. */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
