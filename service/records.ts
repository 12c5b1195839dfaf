import { basename } from 'node:path';
import type { AbsenceProof } from '@merchant-verify/verifier/internal/issuer';
import { formatTimestamp } from '@merchant-verify/verifier/internal/issuer';
import { RecordUnavailableError, StoreUnavailableError } from '../core/errors.ts';
import { strongEtag } from '../core/etag.ts';
import { type CheckKeys, KeyTrust, type TrustSettings } from '../core/key-trust.ts';
import { unverifiedRecord } from '../core/record.ts';
import { canonicalRecordText } from '../core/record-text.ts';
import { KeySetSource } from '../storage/key-set-source.ts';
import { oneAtATime } from '../storage/one-at-a-time.ts';
import type { Store } from '../storage/store.ts';
import { BuildAcceptor, type BuildRefusal } from './build-acceptance.ts';
import { absenceProof, hasRecord, type ServedBuild } from './build-maps.ts';
import { livePosition, missingFromLive, readLiveRecord } from './pack-records.ts';
import { checkServeRule, observed, type RejectionKind, rejectionKind, type StoreReadOutcome } from './serve-rule.ts';
import { VerifiedCache } from './verified-cache.ts';

export { type BuildRefusal, checkServeRule, type RejectionKind, type StoreReadOutcome };

/** Builds looked at for one answer made of several reads: a build that goes live meanwhile costs one more look. */
const LIVE_BUILD_LOOKS = 2;

/** A record ready to serve: its exact bytes (verified, when stored), their entity tag, and whether it was audited. */
export interface ServedRecord {
  bytes: Buffer;
  etag: string;
  /** False for the record of a never-audited domain. */
  audited: boolean;
}

export interface RecordsServiceOptions {
  issuer: string;
  schemaUrl: string;
  /** Upper bound on the verified record bytes kept in memory. */
  cacheBytes: number;
  /** Told about every stored record refused, with the reason and its kind (for the log and metrics). */
  onRejected?: (domain: string, reason: string, kind: RejectionKind) => void;
  /** The clock answers are issued by (epoch ms); `Date.now` unless a test sets its own. */
  now?: () => number;
  /** Told the outcome of every read from the store (for metrics). */
  onStoreRead?: (outcome: StoreReadOutcome) => void;
  /** Told once about every build refused, with the reason (for the log and metrics). */
  onBuildRefused?: (refusal: BuildRefusal) => void;
  /** The keys trusted and whether unsigned builds are served; unset: the first key set read is pinned (see `service/store-trust.ts` for a bucket or an origin), nothing unsigned served. */
  trust?: TrustSettings;
  /** Told once when the keys are pinned from the first key set read (no `trust.trustedKeys`). */
  onKeysPinned?: (kids: string[]) => void;
}

/**
 * The one place a domain's answer is decided, for HTTP, MCP and the CLI alike. The live build's
 * domain map says whether the domain has a record: if not, the never-audited record; if so, the
 * stored record, served only once it passes the serve rule ({@link checkServeRule}), or a typed
 * error (STORE_UNAVAILABLE when the records or the map cannot be read at all, UNAVAILABLE when this
 * record cannot be served: missing, unreadable, too large, corrupt or not verifying). "We could
 * not look" is never answered as "never audited": only the build's signed map says that.
 */
export class RecordsService {
  private readonly cache: VerifiedCache<ServedRecord>;
  /** Loads in progress, so simultaneous misses for one domain read and verify it once. */
  private readonly loading = new Map<string, Promise<ServedRecord>>();
  /** Takes the builds the store finds live, or refuses them (see `service/build-acceptance.ts`). */
  private readonly builds: BuildAcceptor;
  /** Stored records refused since start (missing, unreadable, corrupt, not verifying), for health. */
  private failures = 0;
  /** The (live build, key set) pair the cache holds for, and its name for in-flight loads. */
  private generation = '-';
  /** Its two parts as last seen, compared on every lookup (without making the name). */
  private storeGeneration = '';
  private keysGeneration = -1;
  /** Never-audited records made in the current second (see {@link neverAudited}). */
  private neverAuditedKept = new Map<string, ServedRecord>();
  private neverAuditedSecond = Number.NaN;
  /**
   * Domains the live build's map was searched for and has no record of, so that a flood of
   * questions about unknown domains does not hash each one and search the map again; emptied with
   * the verified cache when another build goes live, and bounded like the never-audited records.
   */
  private readonly absentFromLive = new Set<string>();
  /** The service's clock (epoch ms). */
  readonly now: () => number;
  /** The key set records are checked against: the one the store publishes with its live build, its trusted keys. */
  readonly keys: KeySetSource;

  constructor(
    readonly store: Store,
    private readonly options: RecordsServiceOptions,
  ) {
    this.keys = new KeySetSource(store.keySet(), new KeyTrust(options.trust, options.onKeysPinned));
    this.cache = new VerifiedCache(options.cacheBytes);
    this.now = options.now ?? Date.now;
    this.builds = new BuildAcceptor(store, this.keys, options.issuer, options.onBuildRefused);
  }

  /** Re-checks the live build (checked before it is served) and the key set; one at a time, shared by a retry and the timer. */
  readonly refresh = oneAtATime(async () => {
    await this.store.refresh();
    await this.keys.refresh();
  });

  /** Releases the store's connections (an HTTP origin's or a bucket's pool). */
  async close(): Promise<void> {
    await this.store.close();
  }

  /**
   * The record to serve for a normalized domain (see `normalizeDomain`). `now` is when the
   * question is answered: a never-audited record is issued at the start of that second, so every
   * answer about one unknown domain within a second is the same bytes and entity tag. A verified
   * record in memory and a never-audited one are answered in the same turn, without a promise;
   * only a read from the store is awaited, and every failure is a rejected promise.
   */
  recordFor(domain: string, now = this.now()): ServedRecord | Promise<ServedRecord> {
    try {
      this.syncGeneration();
      const hit = this.cache.get(domain);
      if (hit) return hit;
      if (this.absentFromLive.has(domain)) return this.neverAudited(domain, now);
      if (!hasRecord(this.builds.served(), domain)) {
        if (this.absentFromLive.size >= NEVER_AUDITED_KEPT) this.absentFromLive.clear();
        this.absentFromLive.add(domain);
        return this.neverAudited(domain, now);
      }
      return this.storedRecord(domain);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The proof that a normalized domain has no record in the live build (HAS_RECORD when it has one). */
  async absenceFor(domain: string): Promise<AbsenceProof> {
    this.syncGeneration();
    return absenceProof(await this.buildMap(), domain);
  }

  /** The live build's checked domain map, statement and pack index (STORE_UNAVAILABLE when there is none, or it was refused). */
  async buildMap(): Promise<ServedBuild> {
    return this.builds.served();
  }

  /**
   * What `make` answers from the live build, all of one build: made again when another build went
   * live while it read (its pieces may then be of both, a record of the new build beside the old
   * build's map). A store that keeps swapping builds is STORE_UNAVAILABLE, saying what was made.
   */
  async ofOneBuild<T>(what: string, make: (build: ServedBuild) => Promise<T>): Promise<T> {
    for (let look = 0; look < LIVE_BUILD_LOOKS; look++) {
      const build = await this.buildMap();
      const made = await make(build);
      if ((await this.buildMap()).build === build.build) return made;
    }
    throw new StoreUnavailableError(`the live build changed while ${what} was made, ${LIVE_BUILD_LOOKS} times`);
  }

  /** The trusted keys records are checked with, and whether unsigned ones pass (STORE_UNAVAILABLE without a key set). */
  checkKeys(): CheckKeys {
    return this.keys.get();
  }

  /** What is being served, for health checks. */
  health(): {
    ok: boolean;
    records: { ok: boolean; build: string | null; error: string | null; failures: number; refused: BuildRefusal | null };
    keySet: { ok: boolean; keys: number };
    cache: ReturnType<VerifiedCache<ServedRecord>['stats']>;
  } {
    const state = this.store.describe();
    const refused = this.builds.refused();
    // Without a checked build (the first one refused, or the served one no longer checking) the records are not served.
    const problem = state.ok ? this.builds.problem() : null;
    const records = problem !== null ? { ...state, ok: false, error: problem } : state;
    const keys = this.keys.state();
    return {
      // A refused build kept out while the previous one serves still wants an operator.
      ok: records.ok && keys.ok && refused === null,
      records: {
        ok: records.ok,
        build: records.build ? basename(records.build) : null,
        error: records.error,
        failures: this.failures,
        refused,
      },
      keySet: { ok: keys.ok, keys: keys.keys },
      cache: this.cache.stats(),
    };
  }

  /** The verified stored record of a domain the live build's map lists; from memory when it can be. */
  private storedRecord(domain: string): Promise<ServedRecord> {
    const key = `${this.generation}\u0000${domain}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.loadWithRetry(domain).finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  private async loadWithRetry(domain: string): Promise<ServedRecord> {
    try {
      return await this.load(domain);
    } catch (error) {
      if (!(error instanceof RecordUnavailableError)) throw error;
      // A build and its key set are swapped a moment apart and polled separately: before
      // refusing, look at both again once, so a key rotation never shows as an outage.
      await this.refresh();
      this.syncGeneration();
      try {
        if (!hasRecord(await this.buildMap(), domain)) throw error;
        return await this.load(domain);
      } catch (retryError) {
        if (retryError instanceof RecordUnavailableError) {
          this.failures++;
          this.options.onRejected?.(domain, retryError.message, rejectionKind(retryError));
        }
        throw retryError;
      }
    }
  }

  private async load(domain: string): Promise<ServedRecord> {
    const keys = this.keys.get();
    const began = this.generationNow();
    const at = livePosition(this.builds.served(), domain);
    const bytes = await observed(readLiveRecord(this.store, at, domain), this.options.onStoreRead);
    if (bytes === null) throw missingFromLive(domain);
    checkServeRule(domain, bytes, keys, at.entry);
    const record = { bytes, etag: strongEtag(bytes), audited: true };
    // A record read while a new build was taken is the old build's: served once, never cached for the new one.
    if (this.generationNow() === began) this.cache.set(domain, record);
    return record;
  }

  /** The (live build, key set) pair being served now. */
  private generationNow(): string {
    return `${this.store.generation()}|${this.keys.generation()}`;
  }

  /** Verified records and the map hold for one (live build, key set) pair only. */
  private syncGeneration(): void {
    const store = this.store.generation();
    const keys = this.keys.generation();
    if (store === this.storeGeneration && keys === this.keysGeneration) return;
    this.storeGeneration = store;
    this.keysGeneration = keys;
    this.generation = this.generationNow();
    this.cache.clear();
    this.absentFromLive.clear();
  }

  /**
   * The never-audited record (issued at the start of the current second, which is well inside
   * the minute a client may cache it). Unsigned: what proves it is the absence proof of the
   * build's signed map (`absenceFor`), which needs no private key on the gateway.
   */
  neverAudited(domain: string, now: number): ServedRecord {
    // Made once per domain and second (the bytes depend on nothing else): a flood of questions
    // about unknown domains then costs what hot records do. Bounded: a flood of distinct ones
    // empties the map rather than grow it.
    const second = Math.floor(now / 1000);
    if (second !== this.neverAuditedSecond || this.neverAuditedKept.size >= NEVER_AUDITED_KEPT) {
      this.neverAuditedKept.clear();
      this.neverAuditedSecond = second;
    }
    let served = this.neverAuditedKept.get(domain);
    if (!served) {
      const { issuer, schemaUrl } = this.options;
      const record = unverifiedRecord(domain, { issuer, schemaUrl, issuedAt: formatTimestamp(second * 1000) });
      const bytes = Buffer.from(canonicalRecordText(record));
      served = { bytes, etag: strongEtag(bytes), audited: false };
      this.neverAuditedKept.set(domain, served);
    }
    return served;
  }
}

/** Never-audited records kept for the current second at most. */
const NEVER_AUDITED_KEPT = 10_000;
