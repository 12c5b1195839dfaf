import {
  KEY_SET_PATH,
  type KeySet,
  parseKeySet,
  type RecordVerification,
  trustedKeySet,
  type VerifyOptions,
  verifyRecord,
} from '@merchant-verify/verifier';
import type { Dispatcher } from 'undici';
import { FetchFailedError } from '../core/errors/errors.ts';
import { READ_LIMITS } from '../core/limits.ts';
import { boundedGet } from './bounded-get.ts';

export { FetchFailedError };

export interface KeySetClientOptions {
  /** The gateway's or CDN's base URL, or the full URL of the key set. */
  url: string;
  dispatcher?: Dispatcher;
  timeoutMs?: number;
  /** At most one refetch per this interval because of an unknown `key_id`. */
  unknownKeyCooldownMs?: number;
  /** Freshness when the response has no `max-age`. */
  defaultMaxAgeMs?: number;
  now?: () => number;
  /** The keys the caller trusts (a key set): the fetched set then counts only them and the keys they endorsed. */
  trustedKeys?: KeySet;
}

/**
 * Fetches the public key set and caches it as its `Cache-Control` says (revalidating with the
 * ETag once stale); an answer larger than a key set may be, or a redirect, is FETCH_FAILED. A record signed by a key the cached set does not list triggers one refetch,
 * then a cooldown, so a flood of made-up `key_id`s cannot make the client hammer the server.
 * Concurrent callers share one request.
 */
export class KeySetClient {
  readonly url: string;
  private cached: { keySet: KeySet; etag: string | null; freshUntil: number } | null = null;
  private inflight: Promise<KeySet> | null = null;
  private lastUnknownKeyFetch = -Infinity;
  /** Requests actually sent; for tests and metrics. */
  fetches = 0;

  constructor(private readonly options: KeySetClientOptions) {
    this.url = options.url.endsWith('.json') ? options.url : `${options.url.replace(/\/+$/, '')}${KEY_SET_PATH}`;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** The key set, from cache while fresh. */
  async get(): Promise<KeySet> {
    if (this.cached && this.now() < this.cached.freshUntil) return this.cached.keySet;
    return this.fetch();
  }

  /**
   * A key set that lists `kid` if the server has it: refetches once (cooldown permitting) when
   * the cached one does not. Callers arriving while that refetch runs wait for it rather than
   * getting the old set, so a burst of records signed by a freshly rotated key all verify.
   */
  async getForKid(kid: string): Promise<KeySet> {
    const wasFresh = this.cached !== null && this.now() < this.cached.freshUntil;
    const keySet = await this.get();
    if (keySet.keys.some((k) => k.kid === kid)) return keySet;
    if (this.inflight) return this.inflight;
    const now = this.now();
    // The set was stale, so get() just fetched it: that was the refetch, not a reason for another.
    if (!wasFresh) {
      this.lastUnknownKeyFetch = now;
      return keySet;
    }
    if (now - this.lastUnknownKeyFetch < (this.options.unknownKeyCooldownMs ?? 30_000)) return keySet;
    this.lastUnknownKeyFetch = now;
    return this.fetch();
  }

  private fetch(): Promise<KeySet> {
    this.inflight ??= this.doFetch().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async doFetch(): Promise<KeySet> {
    this.fetches++;
    const headers: Record<string, string> = { accept: 'application/jwk-set+json, application/json' };
    if (this.cached?.etag) headers['if-none-match'] = this.cached.etag;
    const res = await boundedGet(this.url, {
      limit: READ_LIMITS.keySet,
      timeoutMs: this.options.timeoutMs ?? 5000,
      headers,
      dispatcher: this.options.dispatcher,
    });
    const freshUntil = this.now() + freshnessMs(res.headers, this.options.defaultMaxAgeMs ?? 300_000);
    if (res.statusCode === 304 && this.cached) {
      this.cached.freshUntil = freshUntil;
      return this.cached.keySet;
    }
    if (res.statusCode !== 200) throw new FetchFailedError(`key set request to ${this.url} answered ${res.statusCode}`, res.statusCode);
    let body: unknown;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      throw new FetchFailedError(`key set at ${this.url} is not JSON`);
    }
    // With pinned keys, only the keys they endorse count: a key the server lists is not enough.
    const keySet = this.options.trustedKeys ? trustedKeySet(body, this.options.trustedKeys).keySet : parseKeySet(body);
    const etag = res.headers.etag;
    this.cached = { keySet, etag: typeof etag === 'string' ? etag : null, freshUntil };
    return keySet;
  }
}

/** Freshness lifetime from Cache-Control `max-age` less `Age`; no-store/no-cache mean revalidate every time. */
function freshnessMs(headers: Record<string, string | string[] | undefined>, fallback: number): number {
  const cc = String(headers['cache-control'] ?? '').toLowerCase();
  if (/\b(no-store|no-cache)\b/.test(cc)) return 0;
  const m = /\bmax-age=(\d+)/.exec(cc);
  const age = Number(headers.age ?? 0) || 0;
  return m ? Math.max(0, Number(m[1]) - age) * 1000 : fallback;
}

/**
 * The key set to check something signed with: the key its `key_id` names is looked up, refetching
 * the set once if it is not (yet) listed, as after a rotation.
 */
export async function keySetForSigned(client: KeySetClient, signed: unknown): Promise<KeySet> {
  const kid = (signed as { key_id?: unknown } | null)?.key_id;
  return typeof kid === 'string' ? client.getForKid(kid) : client.get();
}

/** Verifies a record with keys from a {@link KeySetClient} ({@link keySetForSigned}). */
export async function verifyRecordWithClient(
  record: unknown,
  client: KeySetClient,
  options: VerifyOptions = {},
): Promise<RecordVerification> {
  return verifyRecord(record, await keySetForSigned(client, record), options);
}
