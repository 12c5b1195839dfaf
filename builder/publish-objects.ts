import { createHash } from 'node:crypto';
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { BuildError } from '../core/errors/errors.ts';
import { DOMAIN_MAP_FILE, LOOKUP_ANSWERS_FILE, PACK_INDEX_FILE, PACKS_DIR } from '../core/layout.ts';
import { type PublishedBuilds, partSizeFor, type Slot, type StoredFile } from '../storage/store.ts';

// How `mvr publish` sends a build's files (builder/publish.ts says what goes up, and in what order).

/** How objects are sent: `concurrency` requests in flight, a file past `partBytes` in parts of that size. */
export interface SendSettings {
  concurrency: number;
  partBytes: number;
}

/** Where a publish stands: objects and bytes done (sent or found up already) of the totals known so far. */
export interface PublishProgress {
  objects: number;
  totalObjects: number;
  bytes: number;
  totalBytes: number;
  uploaded: number;
  skipped: number;
  /** From the rate so far; null before a byte is done. */
  secondsLeft: number | null;
}

/** A build file to send: its path in the build, where it is read from, its length. */
export interface LocalFile {
  path: string;
  file: string;
  bytes: number;
}

/** The media type of a build file in the store. */
export function contentTypeOf(path: string): string {
  if (path.startsWith(`${PACKS_DIR}/`) || path.endsWith('.jsonl')) return 'application/x-ndjson';
  if (path === DOMAIN_MAP_FILE || path === PACK_INDEX_FILE || path === LOOKUP_ANSWERS_FILE) return 'application/octet-stream';
  return 'application/json';
}

/** A build's files with their lengths, read from `dir`. */
export const localFiles = (dir: string, paths: string[]): Promise<LocalFile[]> =>
  Promise.all(paths.map(async (path) => ({ path, file: join(dir, path), bytes: (await stat(join(dir, path))).size })));

/**
 * Sends objects through one pool of request slots and counts them. A build file the store holds
 * already (as its listing says) with the same length and, but for a pack (whose name is its
 * content hash), the same ETag (the MD5 of the bytes, or of the parts' MD5s for an upload in
 * parts) is skipped, so a publish run again after a failure sends only what is missing.
 */
export class ObjectSender {
  readonly progress: PublishProgress = { objects: 0, totalObjects: 0, bytes: 0, totalBytes: 0, uploaded: 0, skipped: 0, secondsLeft: null };
  uploadedBytes = 0;
  readonly slot: Slot;
  private readonly started = performance.now();
  /** The first failure of this publish; null until one. */
  private failed: unknown = null;

  constructor(
    private readonly published: PublishedBuilds,
    private readonly settings: SendSettings,
    private readonly onProgress?: (p: PublishProgress) => void,
  ) {
    const slot = pLimit(settings.concurrency);
    // After a failure, requests still waiting for a slot do not start: the publish ends as soon as those in flight do.
    this.slot = (request) =>
      slot(() => (this.failed ? Promise.reject(new BuildError('not sent: an earlier request of this publish failed')) : request()));
  }

  /** Objects (and their bytes) this publish will cover, counted into the totals as they become known. */
  expect(objects: number, bytes: number): void {
    this.progress.totalObjects += objects;
    this.progress.totalBytes += bytes;
  }

  /**
   * `send` for every item, all at once through the slots. After a failure no request waiting for
   * a slot starts; the first failure is thrown once those in flight have ended.
   */
  async each<T>(items: T[], send: (item: T) => Promise<void>): Promise<void> {
    const results = await Promise.allSettled(
      items.map((item) =>
        send(item).catch((error: unknown) => {
          this.failed ??= error;
          throw error;
        }),
      ),
    );
    // The first failure, not the requests it stopped.
    if (results.some((r) => r.status === 'rejected')) throw this.failed;
  }

  /** A build's files, all at once through the slots, but those `there` (what the store holds of the build) has whole. */
  async putBuildFiles(id: string, files: LocalFile[], there: Map<string, StoredFile>): Promise<void> {
    await this.each(files, async (f) => {
      if (await this.isUp(f, there.get(f.path))) return this.done(f.bytes, false);
      if (f.bytes > this.settings.partBytes) {
        const partBytes = partSizeFor(f.bytes, this.settings.partBytes);
        await this.published.putBuildFileInParts(
          id,
          f.path,
          { bytes: f.bytes, partBytes, read: (s, n) => readRange(f.file, s, n) },
          contentTypeOf(f.path),
          this.slot,
        );
      } else await this.slot(async () => this.published.putBuildFile(id, f.path, await readFile(f.file), contentTypeOf(f.path)));
      this.done(f.bytes, true);
    });
  }

  /** Whether the store holds this build file whole already (`there`: the object it holds at its path). */
  async isUp(f: LocalFile, there: StoredFile | undefined): Promise<boolean> {
    if (!there || there.bytes !== f.bytes) return false;
    if (f.path.startsWith(`${PACKS_DIR}/`)) return true;
    return (await etagsOf(f.file, f.bytes, partSizeFor(f.bytes, this.settings.partBytes))).includes(there.etag);
  }

  /** A build object made here (a kept list, a key set), sent unless the store holds the same bytes. */
  async putBody(id: string, path: string, body: Buffer, contentType: string, there: StoredFile | undefined): Promise<void> {
    if (there?.bytes === body.length && there.etag === createHash('md5').update(body).digest('hex')) return this.done(body.length, false);
    await this.put(() => this.published.putBuildFile(id, path, body, contentType), body.length);
  }

  /** One object, sent whatever the store holds (a log tile it lacks, the log head, a manifest, the live pointer). */
  async put(write: () => Promise<void>, bytes: number): Promise<void> {
    await this.slot(write);
    this.done(bytes, true);
  }

  /** One object found up already (a log tile, immutable once written). */
  skip(bytes: number): void {
    this.done(bytes, false);
  }

  private done(bytes: number, uploaded: boolean): void {
    const p = this.progress;
    p.objects++;
    p.bytes += bytes;
    if (uploaded) {
      p.uploaded++;
      this.uploadedBytes += bytes;
    } else p.skipped++;
    const seconds = (performance.now() - this.started) / 1000;
    // The rate of what was sent: a skipped object costs a request, not its bytes.
    const rate = this.uploadedBytes / seconds;
    p.secondsLeft = rate > 0 ? Math.max(0, p.totalBytes - p.bytes) / rate : null;
    this.onProgress?.(p);
  }
}

async function readRange(file: string, start: number, length: number): Promise<Buffer> {
  if (length === 0) return Buffer.alloc(0);
  const handle = await open(file);
  try {
    const { buffer, bytesRead } = await handle.read({ buffer: Buffer.alloc(length), position: start, length });
    if (bytesRead !== length)
      throw new BuildError(`${file} changed while it was being published (read ${bytesRead} of ${length} bytes at ${start})`);
    return buffer;
  } finally {
    await handle.close();
  }
}

/** The ETags a store may give a file: the MD5 of its bytes, and that of its parts' MD5s with their count (an upload in parts). */
async function etagsOf(file: string, bytes: number, partBytes: number): Promise<string[]> {
  const whole = createHash('md5');
  const parts: Buffer[] = [];
  for (let start = 0; start < bytes || start === 0; start += partBytes) {
    const part = await readRange(file, start, Math.min(partBytes, bytes - start));
    whole.update(part);
    parts.push(createHash('md5').update(part).digest());
  }
  return [whole.digest('hex'), `${createHash('md5').update(Buffer.concat(parts)).digest('hex')}-${parts.length}`];
}
