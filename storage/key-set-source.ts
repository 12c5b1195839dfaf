import { ReadTooLargeError, StoreUnavailableError } from '../core/errors.ts';
import { strongEtag } from '../core/etag.ts';
import { fileVersion, readRegularFile } from '../core/files.ts';
import type { CheckKeys, KeyTrust } from '../core/key-trust.ts';
import { READ_LIMITS } from '../core/limits.ts';

/** A key set as read: the keys it is checked with (its trusted keys), and its bytes. */
export interface LoadedKeySet extends CheckKeys {
  /** The file's exact bytes, served as they are. */
  bytes: Buffer;
  etag: string;
}

/** Where a key set's bytes come from: a file, or the live build in object storage. */
export interface KeySetOrigin {
  /** Where it is, for messages. */
  readonly name: string;
  /** Cheap; changes whenever the bytes may have changed. */
  version(): Promise<string>;
  /** The bytes; throws with the reason when they cannot be had. */
  read(): Promise<Buffer>;
}

/**
 * The key set file `public/.well-known/merchant-verify-keys.json`; a new identity, size or mtime
 * means it changed. Read as every store file is: never through a link, within the limits table's
 * `keySet`.
 */
export function keySetFile(file: string): KeySetOrigin {
  return {
    name: file,
    version: () => fileVersion(file),
    read: async () => {
      try {
        return await readRegularFile(file, READ_LIMITS.keySet.bytes, () => new ReadTooLargeError('keySet', READ_LIMITS.keySet.bytes));
      } catch (error) {
        throw new StoreUnavailableError(
          (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist (run "mvr build")' : (error as Error).message,
        );
      }
    },
  };
}

/**
 * Reads and parses the key set at `origin`, with the version it had just before (throws with the
 * reason); its keys are those `trust` trusts, whatever else it lists.
 */
export async function readKeySet(origin: KeySetOrigin, trust: KeyTrust): Promise<LoadedKeySet & { version: string }> {
  const version = await origin.version().catch(() => 'unknown');
  const bytes = await origin.read();
  return { ...trust.check(bytes), bytes, etag: strongEtag(bytes), version };
}

/**
 * The key set the gateway serves and verifies against, reloaded when its origin changes.
 * Records are checked against exactly what clients download.
 */
export class KeySetSource {
  private current: LoadedKeySet | null = null;
  private error: string | null = 'not loaded yet';
  private version = '';
  private loads = 0;

  constructor(
    private readonly origin: KeySetOrigin,
    /** Which of its keys are used: pinned or endorsed through pinned keys. */
    readonly trust: KeyTrust,
  ) {}

  /** Reads a key set at `origin` (a build's own) under this source's trust. */
  read(origin: KeySetOrigin): Promise<LoadedKeySet & { version: string }> {
    return readKeySet(origin, this.trust);
  }

  /** Re-reads the key set if its origin's version changed. Never throws. */
  async refresh(): Promise<void> {
    const sig = await this.origin.version().catch(() => 'unknown');
    if (sig === this.version) return;
    this.version = sig;
    try {
      const { version: _read, ...loaded } = await readKeySet(this.origin, this.trust);
      this.use(loaded, sig);
    } catch (error) {
      this.current = null;
      this.loads++;
      this.error = `${this.origin.name}: ${(error as Error).message}`;
    }
  }

  /**
   * Serves `loaded`, read from this origin while its version was `version` (a build's found key
   * set has the origin's versions): a build is checked against a key set read with it, and both
   * are swapped in together.
   */
  use(loaded: LoadedKeySet, version: string): void {
    this.version = version;
    this.error = null;
    if (this.current?.etag === loaded.etag) return;
    this.current = {
      keySet: loaded.keySet,
      unsigned: loaded.unsigned,
      untrusted: loaded.untrusted,
      bytes: loaded.bytes,
      etag: loaded.etag,
    };
    this.loads++;
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
