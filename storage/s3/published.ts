import { StoreUnavailableError } from '../../core/errors.ts';
import { BUCKET_LOG_PREFIX, BUILDS_DIR, LIVE_POINTER_OBJECT, LOG_CHECKPOINT, MANIFEST_FILE } from '../../core/layout.ts';
import type { PartSource, PublishedBuilds, Slot, StoredFile } from '../store.ts';
import type { S3Bucket } from './bucket.ts';
import { liveBuildOf } from './live-pointer.ts';
import { putInParts } from './multipart.ts';

/**
 * Builds as `mvr publish` lays them out in a bucket: each under `builds/<id>/` (never changed once
 * written), the log's tiles under `log/` with its head (`log/checkpoint`), and `live.json` naming
 * the live build, written last.
 */
export class S3PublishedBuilds implements PublishedBuilds {
  constructor(private readonly bucket: S3Bucket) {}

  liveNow(): Promise<string | null> {
    return liveBuildOf(this.bucket);
  }

  async hasBuild(build: string): Promise<boolean> {
    const key = `${BUILDS_DIR}/${build}/${MANIFEST_FILE}`;
    const res = await this.bucket.get(key);
    if (res.statusCode === 200) return true;
    if (res.statusCode === 404) return false;
    throw new StoreUnavailableError(`${key} answered ${res.statusCode}`);
  }

  putBuildFile(build: string, path: string, body: Buffer, contentType = 'application/json'): Promise<void> {
    return this.bucket.put(`${BUILDS_DIR}/${build}/${path}`, body, contentType);
  }

  buildFileStates(build: string): Promise<Map<string, StoredFile>> {
    return this.bucket.list(`${BUILDS_DIR}/${build}/`).then((found) => withoutPrefix(found, `${BUILDS_DIR}/${build}/`));
  }

  putBuildFileInParts(build: string, path: string, source: PartSource, contentType: string, slot: Slot): Promise<void> {
    return putInParts(this.bucket, `${BUILDS_DIR}/${build}/${path}`, contentType, source, slot);
  }

  putLogFile(path: string, body: Buffer): Promise<void> {
    return this.bucket.put(`${BUCKET_LOG_PREFIX}${path}`, body, 'application/octet-stream');
  }

  logTileStates(): Promise<Map<string, StoredFile>> {
    return this.bucket.list(`${BUCKET_LOG_PREFIX}tile/`).then((found) => withoutPrefix(found, BUCKET_LOG_PREFIX));
  }

  async logHead(): Promise<Buffer | null> {
    const res = await this.bucket.get(`${BUCKET_LOG_PREFIX}${LOG_CHECKPOINT}`);
    if (res.statusCode === 404) return null;
    if (res.statusCode !== 200) throw new StoreUnavailableError(`${BUCKET_LOG_PREFIX}${LOG_CHECKPOINT} answered ${res.statusCode}`);
    return res.body;
  }

  putLogHead(note: Buffer): Promise<void> {
    return this.bucket.put(`${BUCKET_LOG_PREFIX}${LOG_CHECKPOINT}`, note, 'text/plain; charset=utf-8');
  }

  putLive(pointer: { build: string; published_at: string; records: number | null }): Promise<void> {
    return this.bucket.put(LIVE_POINTER_OBJECT, Buffer.from(`${JSON.stringify(pointer)}\n`), 'application/json');
  }
}

const withoutPrefix = (found: Map<string, StoredFile>, prefix: string) =>
  new Map([...found].map(([key, file]) => [key.slice(prefix.length), file]));
