import { BUCKET_LOG_PREFIX, BUILD_CHECKPOINT_FILE, BUILD_LOG_VKEY_OBJECT, BUILDS_DIR, LOG_CHECKPOINT } from '../../core/layout.ts';
import { PUBLIC_LIMITS } from '../../core/limits.ts';
import { LogFileCache } from '../log-cache.ts';

/**
 * The log's public files in a bucket, from memory ({@link LogFileCache}), so that a flood of
 * requests for them reaches the bucket at most once a file: a full tile for as long as it fits (it
 * never changes), a build's log key likewise, the head and partial tiles for a short time (`mvr
 * log witness` rewrites cosignatures in place, a publish short of its quorum moves the head).
 */
export class S3LogFiles {
  private readonly cache: LogFileCache;

  constructor(
    /** An object's body; null for a 404. */
    private readonly read: (key: string) => Promise<Buffer | null>,
    freshMs: number = PUBLIC_LIMITS.logFreshMs,
  ) {
    this.cache = new LogFileCache(PUBLIC_LIMITS.logCacheBytes, freshMs);
  }

  /** The log's head (`log/checkpoint`): newer than the live build's after a publish short of its quorum; else the live build's. */
  checkpoint(live: string): Promise<Buffer | null> {
    return this.cache.get(LOG_CHECKPOINT, false, async () => {
      const head = await this.read(`${BUCKET_LOG_PREFIX}${LOG_CHECKPOINT}`);
      return head ?? this.read(`${BUILDS_DIR}/${live}/${BUILD_CHECKPOINT_FILE}`);
    });
  }

  /** A tile (`tile/...`). */
  tile(path: string): Promise<Buffer | null> {
    const key = `${BUCKET_LOG_PREFIX}${path}`;
    return this.cache.get(key, !path.includes('.p/'), () => this.read(key));
  }

  /** The log's verifier key published with a build. */
  vkey(build: string): Promise<Buffer | null> {
    const key = `${BUILDS_DIR}/${build}/${BUILD_LOG_VKEY_OBJECT}`;
    return this.cache.get(key, true, () => this.read(key));
  }

  /** A new live build: its checkpoint is read afresh (full tiles stay, they never change). */
  newLiveBuild(): void {
    this.cache.dropChanging();
  }
}
