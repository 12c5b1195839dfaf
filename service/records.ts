import { basename, join } from 'node:path';
import { isMvrError, RecordUnavailableError, type ErrorCode } from '../core/errors.ts';
import { KEY_SET_PATH, type KeySet } from '../core/keyset.ts';
import { recordSchema, unverifiedRecord } from '../core/record.ts';
import { canonicalRecordText } from '../core/record-text.ts';
import { signUnsignedChecked, verifyRecordNode, type SigningKey } from '../core/signing.ts';
import { formatTimestamp } from '../core/time.ts';
import { strongEtag } from './etag.ts';
import { KeySetSource, keySetFile } from './key-set-source.ts';
import { recordsKind } from '../core/layout.ts';
import { parseS3Url, S3Bucket, type S3Config } from './s3.ts';
import { FolderRecordSource, type RecordSource } from './sources/folder.ts';
import { HttpRecordSource } from './sources/http-origin.ts';
import { S3RecordSource } from './sources/s3.ts';
import { VerifiedCache } from './verified-cache.ts';

/** A record ready to serve: its exact bytes (verified, when stored), their entity tag, and whether it was audited. */
export interface ServedRecord {
  bytes: Buffer;
  etag: string;
  /** False for the record of a never-audited domain. */
  audited: boolean;
}

export interface RecordsServiceOptions {
  /**
   * The records: a folder laid out by `mvr build`, the http(s) base URL of an origin serving one
   * build's folder, or `s3://BUCKET/PREFIX` as `mvr publish` fills it.
   */
  records: string;
  /** Credentials, region and endpoint for `s3://` records. */
  s3?: S3Config;
  /** The folder holding the published key set, which records are verified against (with s3:// records, the key set published with the live build is used instead). */
  publicDir: string;
  issuer: string;
  schemaUrl: string;
  /** Upper bound on the verified record bytes kept in memory. */
  cacheBytes: number;
  /** Signs never-audited records when set (opt-in); null by default, so no private key is held. */
  unverifiedSigner: SigningKey | null;
  /** Told about every stored record refused, with the reason (for the log). */
  onRejected?: (domain: string, reason: string) => void;
  /** Told the outcome of every read from the store (for metrics). */
  onStoreRead?: (outcome: StoreReadOutcome) => void;
}

/** What one read from the store came to: a record, none (never audited), or the error's code. */
export type StoreReadOutcome = 'found' | 'absent' | ErrorCode;

/** Opens the records service over a folder, an http(s) origin or a bucket; call `refresh()` before the first lookup. */
export function openRecordsService(options: RecordsServiceOptions): RecordsService {
  const kind = recordsKind(options.records);
  if (kind === 's3') {
    if (!options.s3) throw new Error('s3:// records need the S3 settings');
    const source = new S3RecordSource(new S3Bucket(parseS3Url(options.records), options.s3));
    return new RecordsService(source, new KeySetSource(source.keySetOrigin()), options);
  }
  const keys = new KeySetSource(keySetFile(join(options.publicDir, KEY_SET_PATH)));
  return new RecordsService(kind === 'http' ? new HttpRecordSource(options.records) : new FolderRecordSource(options.records), keys, options);
}

/** Domains found absent from the live build, remembered per generation (about 100 bytes each; cleared when full). */
const MAX_ABSENT = 100_000;

/**
 * The one place a domain's answer is decided, for HTTP, MCP and the CLI alike: the live build's
 * record, served only once it passes the serve rule ({@link checkServeRule}); or, for a valid
 * domain the build has no record of, the never-audited record; or a typed error
 * (STORE_UNAVAILABLE when the records cannot be read at all, UNAVAILABLE when this record
 * cannot be served). "We could not look" is never answered as "never audited".
 */
export class RecordsService {
  private readonly cache: VerifiedCache<ServedRecord>;
  /** Domains the live build was found to have no record of. */
  private readonly absent = new Set<string>();
  /** Loads in progress, so simultaneous misses for one domain read and verify it once. */
  private readonly loading = new Map<string, Promise<ServedRecord | null>>();
  /** The (live build, key set) pair the cache and the known absences hold for, and its name for in-flight loads. */
  private build: string | null = null;
  private keySetLoads = -1;
  private generation = '';

  constructor(
    readonly source: RecordSource,
    readonly keys: KeySetSource,
    private readonly options: RecordsServiceOptions,
  ) {
    this.cache = new VerifiedCache(options.cacheBytes);
  }

  /** Re-checks which build is live and re-reads the key set if it changed. */
  async refresh(): Promise<void> {
    // The source first: a bucket's key set is the one published with the build it finds live.
    await this.source.refresh();
    await this.keys.refresh();
  }

  /** Releases the source's connections (an HTTP origin's pool). */
  async close(): Promise<void> {
    await this.source.close?.();
  }

  /**
   * The record to serve for a normalized domain (see `normalizeDomain`). `now` is when the
   * question is answered: a never-audited record is issued at the start of that second, so every
   * answer about one unknown domain within a second is the same bytes and entity tag.
   */
  async recordFor(domain: string, now = Date.now()): Promise<ServedRecord> {
    return (await this.storedRecord(domain)) ?? this.neverAudited(domain, now);
  }

  /** The key set records are checked against (STORE_UNAVAILABLE when there is none). */
  keySet(): KeySet {
    return this.keys.get().keySet;
  }

  /** What is being served, for health checks. */
  health(): { ok: boolean; records: { ok: boolean; build: string | null; error: string | null }; keySet: { ok: boolean; keys: number }; cache: ReturnType<VerifiedCache<ServedRecord>['stats']> } {
    const records = this.source.describe();
    const keys = this.keys.state();
    return {
      ok: records.ok && keys.ok,
      records: { ok: records.ok, build: records.build ? basename(records.build) : null, error: records.error },
      keySet: { ok: keys.ok, keys: keys.keys },
      cache: this.cache.stats(),
    };
  }

  /** The verified stored record, null when the live build has none; from memory when it can be. */
  private storedRecord(domain: string): Promise<ServedRecord | null> {
    this.syncGeneration();
    const hit = this.cache.get(domain);
    if (hit) return Promise.resolve(hit);
    if (this.absent.has(domain)) return Promise.resolve(null);
    const key = `${this.generation}\u0000${domain}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.loadWithRetry(domain).finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  private async loadWithRetry(domain: string): Promise<ServedRecord | null> {
    try {
      return await this.load(domain);
    } catch (error) {
      if (!(error instanceof RecordUnavailableError)) throw error;
      // A build and its key set are swapped a moment apart and polled separately: before
      // refusing, look at both again once, so a key rotation never shows as an outage.
      await this.refresh();
      this.syncGeneration();
      try {
        return await this.load(domain);
      } catch (retryError) {
        if (retryError instanceof RecordUnavailableError) this.options.onRejected?.(domain, retryError.message);
        throw retryError;
      }
    }
  }

  private async load(domain: string): Promise<ServedRecord | null> {
    const { keySet } = this.keys.get();
    const bytes = await observed(this.source.read(domain), this.options.onStoreRead);
    if (bytes === null) {
      if (this.absent.size >= MAX_ABSENT) this.absent.clear();
      this.absent.add(domain);
      return null;
    }
    checkServeRule(domain, bytes, keySet);
    const record = { bytes, etag: strongEtag(bytes), audited: true };
    this.cache.set(domain, record);
    return record;
  }

  /** Verified records and known absences hold for one (live build, key set) pair only. */
  private syncGeneration(): void {
    const build = this.source.generation(), keySetLoads = this.keys.generation();
    if (build === this.build && keySetLoads === this.keySetLoads) return;
    this.build = build;
    this.keySetLoads = keySetLoads;
    this.generation = `${build}|${keySetLoads}`;
    this.cache.clear();
    this.absent.clear();
  }

  /**
   * The never-audited record (issued at the start of the current second, which is well inside
   * the minute a client may cache it). Unsigned unless the service was given a signing key.
   */
  neverAudited(domain: string, now: number): ServedRecord {
    const { issuer, schemaUrl, unverifiedSigner } = this.options;
    const record = unverifiedRecord(domain, { issuer, schemaUrl, issuedAt: formatTimestamp(Math.floor(now / 1000) * 1000) });
    const text = unverifiedSigner ? signUnsignedChecked(record, unverifiedSigner).canonical : canonicalRecordText(record);
    const bytes = Buffer.from(text);
    return { bytes, etag: strongEtag(bytes), audited: false };
  }
}

/** The read, its outcome told to `onRead` on the way. */
function observed(read: Promise<Buffer | null>, onRead: ((outcome: StoreReadOutcome) => void) | undefined): Promise<Buffer | null> {
  if (!onRead) return read;
  return read.then(
    (bytes) => {
      onRead(bytes === null ? 'absent' : 'found');
      return bytes;
    },
    (error: unknown) => {
      onRead(isMvrError(error) ? error.code : 'INTERNAL');
      throw error;
    },
  );
}

/**
 * The serve rule: a stored record is served only when, in order, it parses, is the record of
 * the domain asked for, has the record's shape, and its signature verifies against the key set
 * this deployment publishes. An unsigned record passes only in a deployment that signs nothing
 * (an empty key set). Throws UNAVAILABLE naming the step that failed.
 */
export function checkServeRule(domain: string, bytes: Buffer, keySet: KeySet): void {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new RecordUnavailableError(`record for ${domain} is corrupt (not JSON)`);
  }
  if ((value as { domain?: unknown } | null)?.domain !== domain) {
    throw new RecordUnavailableError(`record file for ${domain} holds another domain`);
  }
  const shape = recordSchema.safeParse(value);
  if (!shape.success) {
    const issue = shape.error.issues[0]!;
    throw new RecordUnavailableError(`record for ${domain} does not match the schema (${issue.path.join('.')}: ${issue.message})`);
  }
  const verdict = verifyRecordNode(value, keySet);
  if (verdict.valid) return;
  if (verdict.code === 'UNSIGNED' && keySet.keys.length === 0) return;
  throw new RecordUnavailableError(`record for ${domain} failed verification: ${verdict.code} (${verdict.message})`);
}
