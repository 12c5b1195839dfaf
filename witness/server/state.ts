import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256 } from '../../core/hash.ts';

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
 * fsync, rename), so a crash leaves the old state or the new one. One process owns the folder.
 */
export class WitnessState {
  private readonly locks = new Map<string, Promise<unknown>>();
  constructor(readonly dir: string) {}

  async open(): Promise<this> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    return this;
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
  }
}
