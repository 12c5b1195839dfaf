import { readFile, stat } from 'node:fs/promises';
import { parseKeySet, type KeySet } from '../core/keyset.ts';
import { StoreUnavailableError } from '../core/errors.ts';
import { strongEtag } from './etag.ts';

export interface LoadedKeySet {
  keySet: KeySet;
  /** The file's exact bytes, served as they are. */
  bytes: Buffer;
  etag: string;
}

/**
 * The key set the gateway serves and verifies against: `public/.well-known/merchant-verify-keys.json`,
 * reloaded when the file changes. Records are checked against exactly what clients download.
 */
export class KeySetSource {
  private current: LoadedKeySet | null = null;
  private error: string | null = 'not loaded yet';
  private signature = '';
  private loads = 0;

  constructor(readonly file: string) {}

  /** Re-reads the file if its identity, size or mtime changed. Never throws. */
  async refresh(): Promise<void> {
    const st = await stat(this.file).catch(() => null);
    const sig = st ? `${st.ino}:${st.size}:${st.mtimeMs}` : 'missing';
    if (sig === this.signature) return;
    this.signature = sig;
    try {
      const bytes = await readFile(this.file);
      const keySet = parseKeySet(JSON.parse(bytes.toString('utf8')));
      const etag = strongEtag(bytes);
      if (this.current?.etag === etag) return;
      this.current = { keySet, bytes, etag };
      this.loads++;
      this.error = null;
    } catch (error) {
      this.current = null;
      this.loads++;
      this.error = (error as NodeJS.ErrnoException).code === 'ENOENT' ? `${this.file} does not exist (run "mvr build")` : `${this.file}: ${(error as Error).message}`;
    }
  }

  /** The loaded key set, or throws STORE_UNAVAILABLE: without it no record can be checked. */
  get(): LoadedKeySet {
    if (!this.current) throw new StoreUnavailableError(`key set unavailable: ${this.error}`);
    return this.current;
  }

  /** Changes whenever the key set (or its absence) changes. */
  generation(): number {
    return this.loads;
  }

  /** For health: whether a key set is loaded, and why not. */
  state(): { ok: boolean; keys: number; error: string | null } {
    return { ok: this.current !== null, keys: this.current?.keySet.keys.length ?? 0, error: this.error };
  }
}
