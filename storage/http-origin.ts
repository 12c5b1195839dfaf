import { createHash } from 'node:crypto';
import {
  NoBuildHistoryError,
  NoLogError,
  ReadDeadlineError,
  ReadTooLargeError,
  RecordUnavailableError,
  StoreUnavailableError,
} from '../core/errors.ts';
import { MANIFEST_FILE } from '../core/layout.ts';
import { checkRangeLimit } from '../core/limits.ts';
import { rangeBody, rangeHeader } from '../core/ranges.ts';
import type { KeptBuild } from './kept-builds.ts';
import { oneAtATime } from './one-at-a-time.ts';
import { type OriginAnswer, OriginTransport, type OriginTransportOptions } from './origin-transport.ts';
import { publicKeySet, publicLogFile, publicLogVkey } from './public-files.ts';
import { type BuildAcceptance, type Store, takeEveryBuild } from './store.ts';

/** Why an origin keeps no history and no log. */
const ONE_BUILD = 'its records come from an http(s) origin, which serves one build';

export interface HttpOriginOptions extends OriginTransportOptions {
  /** The origin is believed to be up for this long after a successful manifest fetch; a 404 then means "never audited". */
  manifestTtlMs?: number;
}

/**
 * Records behind an HTTP origin (object storage, a CDN origin, nginx): the build's folder,
 * `<base>/manifest.json`, `<base>/pack-index` and `<base>/packs/<sha256>.jsonl`, a record read
 * as one range of its pack (Range requests; an origin that ignores them serves no record). Keep-alive pool, timeouts, retries
 * with backoff. As with the folder, a 404 is only "never audited" while the origin answers for
 * its manifest; an origin that is down is STORE_UNAVAILABLE. An origin serves one build: it
 * keeps no history and no log of its own; the key set and the public log files are the public
 * folder's, as the gateway serves them. The manifest is asked for with the validators the origin
 * gave (ETag, Last-Modified), so an unchanged build costs a 304.
 */
export class HttpOriginStore implements Store {
  private readonly base: string;
  private readonly transport: OriginTransport;
  private manifestEtag: string | null = null;
  /** The origin's own validators of the manifest served, sent back on the next refresh. */
  private validators: Record<string, string> = {};
  private manifestOkAt = -Infinity;
  private error: string | null = 'not loaded yet';
  private accept: BuildAcceptance = takeEveryBuild;

  constructor(
    /** As given, for messages. */
    readonly url: string,
    private readonly publicDir: string,
    private readonly options: HttpOriginOptions = {},
  ) {
    this.base = url.replace(/\/+$/, '');
    this.transport = new OriginTransport(options);
  }

  get name(): string {
    return this.url;
  }

  /** One at a time: a refresh asked for while one runs waits for it. */
  readonly refresh = oneAtATime(() => this.look());

  private async look(): Promise<void> {
    try {
      const served = this.manifestEtag;
      const res = await this.get(MANIFEST_FILE, served === null ? {} : this.validators);
      if (res.statusCode === 304 && served !== null) {
        this.confirmed();
        return;
      }
      if (res.statusCode !== 200) throw new StoreUnavailableError(`manifest answered ${res.statusCode}`);
      const etag = createHash('sha256').update(res.body).digest('base64url');
      if (etag !== served) {
        const take = () => (this.manifestEtag = etag);
        await this.accept({ generation: etag, build: null, readFile: (name) => this.fetchFile(name), keySet: this.keySet(), take });
        // The origin serves the new build's files now: a build not taken cannot fall back to the one before.
        if (this.manifestEtag !== etag) throw new StoreUnavailableError('the build it serves is refused');
      }
      this.validators = validatorsOf(res.headers);
      this.confirmed();
    } catch (error) {
      this.error = `records origin ${this.base} unavailable: ${(error as Error).message}`;
      // An origin that answers past a read's limits (a manifest too large, a read past its
      // deadline) does not take the build served so far with it: it stays served, and health says
      // why. "Not found" is no longer believed from it (see readLiveRange) until it answers again.
      if (error instanceof ReadTooLargeError || error instanceof ReadDeadlineError) return;
      // No generation while the origin is down: the verified cache empties and every lookup is
      // STORE_UNAVAILABLE, as with a missing folder, rather than answers from an unknown build.
      this.manifestEtag = null;
      this.manifestOkAt = -Infinity;
      this.validators = {};
    }
  }

  private confirmed(): void {
    this.manifestOkAt = performance.now();
    this.error = null;
  }

  generation(): string {
    return this.manifestEtag ?? '';
  }

  describe() {
    const served = this.manifestEtag !== null;
    return {
      ok: served && this.error === null,
      build: served ? `${this.base} (manifest ${this.manifestEtag?.slice(0, 12)})` : null,
      error: this.error,
    };
  }

  /** A range of a file of the build (a record's range of a pack): a 206 with the range asked for, or UNAVAILABLE. */
  async readLiveRange(name: string, start: number, length: number): Promise<Buffer | null> {
    if (this.manifestEtag === null) throw new StoreUnavailableError(this.error ?? `records origin ${this.base} unavailable`);
    checkRangeLimit(name, length);
    if (length === 0) return Buffer.alloc(0);
    let res: OriginAnswer;
    try {
      res = await this.get(name, rangeHeader(start, length), length);
    } catch (error) {
      if (error instanceof ReadTooLargeError || error instanceof ReadDeadlineError) throw error;
      throw new StoreUnavailableError(`records origin ${this.base} unavailable: ${(error as Error).message}`);
    }
    if (res.statusCode === 206 || res.statusCode === 416 || res.statusCode === 200)
      return rangeBody(res, start, length, `records origin ${this.base} (${name})`);
    if (res.statusCode === 404) {
      // Believe "not found" only from an origin whose manifest answered recently.
      if (performance.now() - this.manifestOkAt > (this.options.manifestTtlMs ?? 5000)) await this.refresh();
      if (this.error || this.manifestEtag === null) throw new StoreUnavailableError(this.error ?? 'records origin unavailable');
      return null;
    }
    if (res.statusCode >= 500) throw new StoreUnavailableError(`records origin answered ${res.statusCode} for ${name}`);
    throw new RecordUnavailableError(`records origin answered ${res.statusCode} for ${name}`);
  }

  async readLiveFile(name: string): Promise<Buffer | null> {
    if (this.manifestEtag === null) throw new StoreUnavailableError(this.error ?? `records origin ${this.base} unavailable`);
    return this.fetchFile(name);
  }

  acceptBuildsWith(accept: BuildAcceptance): void {
    this.accept = accept;
  }

  private async fetchFile(name: string): Promise<Buffer | null> {
    let res: OriginAnswer;
    try {
      res = await this.get(name);
    } catch (error) {
      if (error instanceof ReadTooLargeError || error instanceof ReadDeadlineError) throw error;
      throw new StoreUnavailableError(`records origin ${this.base} unavailable: ${(error as Error).message}`);
    }
    if (res.statusCode === 200) return res.body;
    if (res.statusCode === 404) return null;
    throw new StoreUnavailableError(`records origin answered ${res.statusCode} for ${name}`);
  }

  /** An origin serves one build's folder and does not name it. */
  liveBuild(): string | null {
    return null;
  }

  keySet() {
    return publicKeySet(this.publicDir);
  }

  async keptVersion(): Promise<string> {
    throw new NoBuildHistoryError(ONE_BUILD);
  }

  async keptBuilds(): Promise<KeptBuild[]> {
    throw new NoBuildHistoryError(ONE_BUILD);
  }

  async readFile(): Promise<Buffer | null> {
    throw new NoBuildHistoryError(ONE_BUILD);
  }

  async readRange(): Promise<Buffer | null> {
    throw new NoBuildHistoryError(ONE_BUILD);
  }

  async fileSize(): Promise<number | null> {
    throw new NoBuildHistoryError(ONE_BUILD);
  }

  async logBuild(): Promise<string> {
    throw new NoLogError(ONE_BUILD);
  }

  /** The gateway's own public/log (an origin holds the records only). */
  logFile(path: string): Promise<Buffer | null> {
    return publicLogFile(this.publicDir, path);
  }

  logVkey(): Promise<Buffer | null> {
    return publicLogVkey(this.publicDir);
  }

  /** Closes the connection pool. */
  close(): Promise<void> {
    return this.transport.close();
  }

  /** A file of the build's folder, within the limits its kind has (core/limits.ts). */
  private get(path: string, headers: Record<string, string> = {}, maxBytes?: number): Promise<OriginAnswer> {
    return this.transport.send(`${this.base}/${path}`, { path, headers, maxBytes });
  }
}

/** The conditional-request headers that the validators an origin gave with an answer make. */
function validatorsOf(headers: OriginAnswer['headers']): Record<string, string> {
  const validators: Record<string, string> = {};
  if (typeof headers.etag === 'string') validators['if-none-match'] = headers.etag;
  if (typeof headers['last-modified'] === 'string') validators['if-modified-since'] = headers['last-modified'];
  return validators;
}
