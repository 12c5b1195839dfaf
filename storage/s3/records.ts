import { RecordUnavailableError, StoreUnavailableError } from '@merchant-verify/verifier/errors';
import { BUILD_ID, BUILDS_DIR, BUILD_KEY_SET_OBJECT, LIVE_POINTER_OBJECT, recordPath } from '../../core/layout.ts';
import type { KeySetOrigin } from '../key-set-source.ts';
import { BodyTooLargeError, type S3Bucket } from './bucket.ts';
import { MAX_RECORD_BYTES } from '../../core/files.ts';
import type { RecordSource } from '../folder.ts';

/** The live build as last read from the bucket: its id and the key set published with it. */
interface Live {
  build: string;
  keySet: Buffer;
  pointerEtag: string | null;
  confirmedAt: number;
}

/** Reads the body of `live.json`: `{"build": "<id>", ...}`. */
export function parseLivePointer(body: Buffer): string {
  let build: unknown;
  try {
    build = (JSON.parse(body.toString('utf8')) as { build?: unknown }).build;
  } catch {
    throw new Error(`${LIVE_POINTER_OBJECT} is not JSON`);
  }
  if (typeof build !== 'string' || !BUILD_ID.test(build)) throw new Error(`${LIVE_POINTER_OBJECT} names no valid build id`);
  return build;
}

/** The build `live.json` names in a bucket; null when nothing is published there yet. */
export async function liveBuildOf(bucket: S3Bucket): Promise<string | null> {
  const res = await bucket.get(LIVE_POINTER_OBJECT);
  if (res.statusCode === 404) return null;
  if (res.statusCode !== 200) throw new Error(`${bucket.name}/${LIVE_POINTER_OBJECT} answered ${res.statusCode}`);
  return parseLivePointer(res.body);
}

/**
 * Records in a private S3 bucket, as `mvr publish` lays them out: `live.json` names the live
 * build; its records, manifest and key set sit under `builds/<id>/`, never changed once written.
 * Each refresh asks for `live.json` with its ETag (a 304 costs nothing); a new build is taken
 * with its own key set, so records and key set always come from the same build. As with the
 * folder and the HTTP origin, a 404 is "never audited" only while the bucket answers; a bucket
 * that cannot be read is STORE_UNAVAILABLE.
 */
export class S3RecordSource implements RecordSource {
  private live: Live | null = null;
  private error: string | null = 'not loaded yet';

  constructor(
    /** Also read by the build history (past builds, kept lists, change feeds). */
    readonly bucket: S3Bucket,
    private readonly options: { pointerTtlMs?: number } = {},
  ) {}

  async refresh(): Promise<void> {
    try {
      const known = this.live;
      const res = await this.bucket.get(LIVE_POINTER_OBJECT, known?.pointerEtag ? { 'if-none-match': known.pointerEtag } : {});
      if (res.statusCode === 304 && known) {
        known.confirmedAt = performance.now();
      } else {
        if (res.statusCode === 404) throw new Error(`no ${LIVE_POINTER_OBJECT} (nothing published yet: run "mvr publish --to ${this.bucket.name}")`);
        if (res.statusCode !== 200) throw new Error(`${LIVE_POINTER_OBJECT} answered ${res.statusCode}`);
        const build = parseLivePointer(res.body);
        const pointerEtag = typeof res.headers.etag === 'string' ? res.headers.etag : null;
        const keySet = build === known?.build ? known.keySet : await this.object(`${BUILDS_DIR}/${build}/${BUILD_KEY_SET_OBJECT}`);
        this.live = { build, keySet, pointerEtag, confirmedAt: performance.now() };
      }
      this.error = null;
    } catch (error) {
      // No generation while the bucket cannot be read: every lookup is STORE_UNAVAILABLE, as
      // with a missing folder, rather than answers from a build we cannot confirm.
      this.live = null;
      this.error = `records store ${this.bucket.name} unavailable: ${(error as Error).message}`;
    }
  }

  generation(): string {
    return this.live?.build ?? '';
  }

  describe() {
    return { ok: this.live !== null, build: this.live?.build ?? null, error: this.error };
  }

  /** The key set published with the live build, for the records service's key set. */
  keySetOrigin(): KeySetOrigin {
    return {
      name: `${this.bucket.name}/${BUILDS_DIR}/<live>/${BUILD_KEY_SET_OBJECT}`,
      version: async () => this.live?.build ?? `unavailable: ${this.error}`,
      read: async () => {
        if (!this.live) throw new Error(this.error ?? 'records store unavailable');
        return this.live.keySet;
      },
    };
  }

  async read(domain: string): Promise<Buffer | null> {
    const live = this.live;
    if (!live) throw new StoreUnavailableError(this.error ?? `records store ${this.bucket.name} unavailable`);
    const key = `${BUILDS_DIR}/${live.build}/${recordPath(domain)}`;
    let res;
    try {
      res = await this.bucket.get(key, {}, MAX_RECORD_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError) throw new RecordUnavailableError(`record object of ${domain} has more than the ${MAX_RECORD_BYTES} bytes a record may have`);
      throw new StoreUnavailableError(`records store ${this.bucket.name} unavailable: ${(error as Error).message}`);
    }
    if (res.statusCode === 200) return res.body;
    if (res.statusCode === 404) {
      // Believe "not found" only from a bucket whose live pointer answered recently.
      if (performance.now() - live.confirmedAt > (this.options.pointerTtlMs ?? 5000)) await this.refresh();
      if (!this.live) throw new StoreUnavailableError(this.error ?? 'records store unavailable');
      return null;
    }
    if (res.statusCode >= 500 || res.statusCode === 403) throw new StoreUnavailableError(`records store answered ${res.statusCode} for ${domain}`);
    throw new RecordUnavailableError(`records store answered ${res.statusCode} for ${domain}`);
  }

  async readBuildFile(name: string): Promise<Buffer | null> {
    const live = this.live;
    if (!live) throw new StoreUnavailableError(this.error ?? `records store ${this.bucket.name} unavailable`);
    let res;
    try {
      res = await this.bucket.get(`${BUILDS_DIR}/${live.build}/${name}`);
    } catch (error) {
      throw new StoreUnavailableError(`records store ${this.bucket.name} unavailable: ${(error as Error).message}`);
    }
    if (res.statusCode === 200) return res.body;
    if (res.statusCode === 404) return null;
    throw new StoreUnavailableError(`records store answered ${res.statusCode} for ${BUILDS_DIR}/${live.build}/${name}`);
  }

  liveBuild(): string | null {
    return this.live?.build ?? null;
  }

  close(): Promise<void> {
    return this.bucket.close();
  }

  private async object(key: string): Promise<Buffer> {
    const res = await this.bucket.get(key);
    if (res.statusCode !== 200) throw new Error(`${key} answered ${res.statusCode}`);
    return res.body;
  }
}

