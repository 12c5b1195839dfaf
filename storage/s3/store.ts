import { ReadDeadlineError, ReadTooLargeError, StoreUnavailableError } from '../../core/errors.ts';
import {
  BUILD_KEPT_OBJECT,
  BUILD_KEY_SET_OBJECT,
  BUILDS_DIR,
  LIVE_POINTER_OBJECT,
  LOG_CHECKPOINT,
  MANIFEST_FILE,
} from '../../core/layout.ts';
import { checkRangeLimit } from '../../core/limits.ts';
import { rangeBody, rangeHeader } from '../../core/ranges.ts';
import { type KeptBuild, keptBuilds, parseKeptList } from '../kept-builds.ts';
import type { KeySetOrigin } from '../key-set-source.ts';
import { oneAtATime } from '../one-at-a-time.ts';
import { type BuildAcceptance, type Store, takeEveryBuild } from '../store.ts';
import type { S3Bucket } from './bucket.ts';
import { parseLivePointer } from './live-pointer.ts';
import { S3LogFiles } from './log-files.ts';
import { S3PublishedBuilds } from './published.ts';

/** The live build as last read from the bucket: its id and the key set published with it. */
interface Live {
  build: string;
  keySet: Buffer;
  pointerEtag: string | null;
  confirmedAt: number;
}

/**
 * Builds in a private S3 bucket, as `mvr publish` lays them out: `live.json` names the live
 * build; its packs, pack index, manifest, key set and kept list sit under `builds/<id>/`, never changed
 * once written; the log's tiles under `log/`. Each refresh asks for `live.json` with its ETag (a
 * 304 costs nothing); a new build is taken with its own key set, so records and key set always
 * come from the same build. A 404 is "not there" only while the bucket answers; a bucket that
 * cannot be read is STORE_UNAVAILABLE.
 */
export class S3Store implements Store {
  private live: Live | null = null;
  private error: string | null = 'not loaded yet';
  /** The log's public files, from memory: every tile request asks for the checkpoint too. */
  private readonly logFiles: S3LogFiles;
  private accept: BuildAcceptance = takeEveryBuild;

  constructor(
    private readonly bucket: S3Bucket,
    private readonly options: { pointerTtlMs?: number; logFreshMs?: number } = {},
  ) {
    this.logFiles = new S3LogFiles(async (key) => (await this.get(key, {}))?.body ?? null, options.logFreshMs);
  }

  get name(): string {
    return this.bucket.name;
  }

  /** One at a time: a refresh asked for while one runs waits for it. */
  readonly refresh = oneAtATime(() => this.look());

  private async look(): Promise<void> {
    try {
      const known = this.live;
      const res = await this.bucket.get(LIVE_POINTER_OBJECT, known?.pointerEtag ? { 'if-none-match': known.pointerEtag } : {});
      if (res.statusCode === 304 && known) {
        known.confirmedAt = performance.now();
      } else {
        if (res.statusCode === 404)
          throw new StoreUnavailableError(`no ${LIVE_POINTER_OBJECT} (nothing published yet: run "mvr publish --to ${this.bucket.name}")`);
        if (res.statusCode !== 200) throw new StoreUnavailableError(`${LIVE_POINTER_OBJECT} answered ${res.statusCode}`);
        const build = parseLivePointer(res.body);
        const pointerEtag = typeof res.headers.etag === 'string' ? res.headers.etag : null;
        if (build === known?.build) this.live = { ...known, pointerEtag, confirmedAt: performance.now() };
        else await this.offer(build, pointerEtag, await this.object(`${BUILDS_DIR}/${build}/${BUILD_KEY_SET_OBJECT}`));
        // Not taken: the build served so far stays served (the bucket answered for it just now).
        if (!this.live) throw new StoreUnavailableError(`build ${build}, named live, is refused`);
        if (this.live === known) known.confirmedAt = performance.now();
      }
      this.error = null;
    } catch (error) {
      this.error = `records store ${this.bucket.name} unavailable: ${(error as Error).message}`;
      // A bucket that answers past a read's limits (a pointer too large, a read past its deadline)
      // does not take the build served so far with it: it stays served, and health says why.
      if (error instanceof ReadTooLargeError || error instanceof ReadDeadlineError) return;
      // No generation while the bucket cannot be read: every lookup is STORE_UNAVAILABLE, as
      // with a missing folder, rather than answers from a build we cannot confirm.
      this.live = null;
    }
  }

  acceptBuildsWith(accept: BuildAcceptance): void {
    this.accept = accept;
  }

  /** A build `live.json` names, with the key set published with it, offered to be served. */
  private offer(build: string, pointerEtag: string | null, keySet: Buffer): Promise<void> {
    return this.accept({
      generation: build,
      build,
      readFile: (name) => this.readFile(build, name),
      keySet: {
        name: `${this.bucket.name}/${BUILDS_DIR}/${build}/${BUILD_KEY_SET_OBJECT}`,
        version: async () => build,
        read: async () => keySet,
      },
      take: () => {
        this.live = { build, keySet, pointerEtag, confirmedAt: performance.now() };
        this.logFiles.newLiveBuild();
      },
    });
  }

  generation(): string {
    return this.live?.build ?? '';
  }

  liveBuild(): string | null {
    return this.live?.build ?? null;
  }

  describe() {
    return { ok: this.live !== null && this.error === null, build: this.live?.build ?? null, error: this.error };
  }

  /** A range of a file of the live build (a record's range of a pack): one ranged GET. */
  async readLiveRange(name: string, start: number, length: number): Promise<Buffer | null> {
    const live = this.current();
    const bytes = await this.readRange(live.build, name, start, length);
    if (bytes !== null) return bytes;
    // Believe "not found" only from a bucket whose live pointer answered recently.
    if (performance.now() - live.confirmedAt > (this.options.pointerTtlMs ?? 5000)) await this.refresh();
    if (!this.live) throw new StoreUnavailableError(this.error ?? 'records store unavailable');
    return null;
  }

  async readLiveFile(name: string): Promise<Buffer | null> {
    return this.readFile(this.current().build, name);
  }

  /** The key set published with the live build, for the records service's key set. */
  keySet(): KeySetOrigin {
    return {
      name: `${this.bucket.name}/${BUILDS_DIR}/<live>/${BUILD_KEY_SET_OBJECT}`,
      version: async () => this.live?.build ?? `unavailable: ${this.error}`,
      read: async () => {
        if (!this.live) throw new StoreUnavailableError(this.error ?? 'records store unavailable');
        return this.live.keySet;
      },
    };
  }

  /** Objects of a build never change, so the list (published with the live build) is read again only for a new live build. */
  async keptVersion(): Promise<string> {
    return '';
  }

  async keptBuilds(): Promise<KeptBuild[]> {
    const live = await this.logBuild();
    // A build published before kept lists were uploaded has none: it is then the only kept build.
    const list = await this.readFile(live, BUILD_KEPT_OBJECT);
    return keptBuilds(live, list ? parseKeptList(list) : [], (id) => this.readFile(id, MANIFEST_FILE));
  }

  async readFile(build: string, path: string): Promise<Buffer | null> {
    return (await this.get(`${BUILDS_DIR}/${build}/${path}`, {}))?.body ?? null;
  }

  async readRange(build: string, path: string, start: number, length: number): Promise<Buffer | null> {
    checkRangeLimit(path, length);
    if (length === 0) return Buffer.alloc(0);
    const key = `${BUILDS_DIR}/${build}/${path}`;
    const res = await this.get(key, rangeHeader(start, length), length);
    return res && rangeBody(res, start, length, `records store ${this.bucket.name} (${key})`);
  }

  /** A build file's length, from a HEAD of its object; null when there is none. */
  async fileSize(build: string, path: string): Promise<number | null> {
    const key = `${BUILDS_DIR}/${build}/${path}`;
    try {
      return (await this.bucket.head(key))?.bytes ?? null;
    } catch (error) {
      throw new StoreUnavailableError(`records store ${this.bucket.name} unavailable: ${(error as Error).message}`);
    }
  }

  /** The live build as the records service last confirmed it. */
  async logBuild(): Promise<string> {
    if (!this.live) throw new StoreUnavailableError(`records store ${this.bucket.name} unavailable: no live build read yet`);
    return this.live.build;
  }

  /** The log's head (`log/checkpoint`, as a folder serves public/log's) or a tile, from memory while it can be. */
  async logFile(path: string): Promise<Buffer | null> {
    return path === LOG_CHECKPOINT ? this.logFiles.checkpoint(await this.logBuild()) : this.logFiles.tile(path);
  }

  async logVkey(): Promise<Buffer | null> {
    return this.logFiles.vkey(await this.logBuild());
  }

  published(): S3PublishedBuilds {
    return new S3PublishedBuilds(this.bucket);
  }

  close(): Promise<void> {
    return this.bucket.close();
  }

  private current(): Live {
    if (!this.live) throw new StoreUnavailableError(this.error ?? `records store ${this.bucket.name} unavailable`);
    return this.live;
  }

  /** An object; null for a 404 from a bucket that answers. Anything else unreadable is STORE_UNAVAILABLE, never "not there". */
  private async get(key: string, headers: Record<string, string>, maxBytes?: number) {
    const res = await this.send(key, headers, maxBytes);
    if (res.statusCode === 404) return null;
    if (res.statusCode === 200 || res.statusCode === 206 || (res.statusCode === 416 && headers.range)) return res;
    throw new StoreUnavailableError(`records store ${this.bucket.name} answered ${res.statusCode} for ${key}`);
  }

  /** An answer of the bucket: anything past its limits, or unreachable, is the store's problem. */
  private async send(key: string, headers: Record<string, string>, maxBytes?: number) {
    try {
      return await this.bucket.get(key, headers, maxBytes);
    } catch (error) {
      if (error instanceof ReadTooLargeError || error instanceof ReadDeadlineError) throw error;
      // No `cause`: the gateway answers with an error's cause when it has one (h3 passes it on).
      throw new StoreUnavailableError(`records store ${this.bucket.name} unavailable: ${(error as Error).message}`);
    }
  }

  private async object(key: string): Promise<Buffer> {
    const res = await this.bucket.get(key);
    if (res.statusCode !== 200) throw new StoreUnavailableError(`${key} answered ${res.statusCode}`);
    return res.body;
  }
}
