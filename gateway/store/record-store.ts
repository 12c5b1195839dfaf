import { RecordUnavailableError } from '../../core/errors.ts';
import { recordSchema } from '../../core/record.ts';
import { verifyRecordNode } from '../../core/signing.ts';
import { join } from 'node:path';
import { KEY_SET_PATH } from '../../core/keyset.ts';
import { FolderRecordSource, type RecordSource } from './folder-source.ts';
import { HttpRecordSource } from './http-source.ts';
import { KeySetSource } from './key-set-source.ts';
import { strongEtag } from '../http/reply.ts';

/**
 * The store a gateway serves from: records in a folder or behind an http(s) origin, verified
 * against the key set in `publicDir`. One place wires it, for the gateway and `mvr mcp` alike.
 */
export function openRecordStore(records: string, publicDir: string, options: RecordStoreOptions): RecordStore {
  const source = /^https?:\/\//i.test(records) ? new HttpRecordSource(records) : new FolderRecordSource(records);
  return new RecordStore(source, new KeySetSource(join(publicDir, KEY_SET_PATH)), options);
}

/** A record ready to serve: the stored bytes exactly, already verified. */
export interface ServedRecord {
  bytes: Buffer;
  etag: string;
}

/** A record in the cache, marked when answered since it was last passed over for eviction. */
interface CachedRecord extends ServedRecord {
  used: boolean;
}

export type Lookup = { kind: 'record'; record: ServedRecord } | { kind: 'absent' };

export interface RecordStoreOptions {
  /** Upper bound on the verified bytes kept in memory. */
  cacheBytes: number;
  /** Told about every record refused, with the reason (for the log). */
  onRejected?: (domain: string, reason: string) => void;
}

/**
 * Verify-before-serve. A record's bytes are served only after they parsed, match the requested
 * domain and the record schema, and their signature verified against the key set the gateway
 * publishes. Verified bytes are kept in a cache bounded by bytes (second-chance eviction, an
 * approximation of least recently used), valid for one generation of (live build, key set); a
 * new build or key set empties it.
 */
export class RecordStore {
  /** Oldest first (insertion order, and the order eviction looks at). */
  private cache = new Map<string, CachedRecord>();
  private cachedBytes = 0;
  private cacheGeneration = '';
  /**
   * Domains proven absent from the live build (the record file missing while the build's
   * manifest was there). Like verified records, valid for one generation only, and bounded.
   */
  private absent = new Set<string>();
  /** Loads in progress, so simultaneous misses for one domain read and verify it once. */
  private loading = new Map<string, Promise<Lookup>>();

  constructor(
    readonly source: RecordSource,
    readonly keys: KeySetSource,
    private readonly options: RecordStoreOptions,
  ) {}

  async refresh(): Promise<void> {
    await Promise.all([this.source.refresh(), this.keys.refresh()]);
  }

  /** Releases the source's connections (an HTTP origin's pool). */
  async close(): Promise<void> {
    if (this.source instanceof HttpRecordSource) await this.source.close();
  }

  /**
   * What is known without I/O for the live build and key set: the verified record if it is in
   * memory, `absent` if the build was already found to have none, else null. No promise.
   */
  peek(domain: string): ServedRecord | 'absent' | null {
    this.syncGeneration();
    const hit = this.cache.get(domain);
    if (hit) {
      // A hit only marks the record; the map is not touched. Moving hot records to the newest
      // end on hits (a delete and a set) made the map rebuild its table over and over, garbage
      // in the old generation that cost a major collection or two a second under load.
      hit.used = true;
      return hit;
    }
    return this.absent.has(domain) ? 'absent' : null;
  }

  /** The verified record for a normalized domain, `absent` when never audited, or a typed error. */
  async lookup(domain: string): Promise<Lookup> {
    const known = this.peek(domain);
    if (known === 'absent') return { kind: 'absent' };
    if (known) return { kind: 'record', record: known };
    const key = `${this.cacheGeneration}\u0000${domain}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.loadVerified(domain).finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  private async loadVerified(domain: string): Promise<Lookup> {
    try {
      return await this.load(domain);
    } catch (error) {
      if (!(error instanceof RecordUnavailableError)) throw error;
      // A build and its key set are swapped a moment apart and polled separately: before
      // refusing, look at both again once, so a rotation never shows as an outage.
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

  /** Cache statistics for health and benchmarks. */
  stats(): { entries: number; bytes: number; limit: number } {
    return { entries: this.cache.size, bytes: this.cachedBytes, limit: this.options.cacheBytes };
  }

  private syncGeneration(): void {
    const build = this.source.generation(), keys = safeKeyGeneration(this.keys);
    if (build === this.lastBuild && keys === this.lastKeys) return;
    this.lastBuild = build;
    this.lastKeys = keys;
    this.cache.clear();
    this.absent.clear();
    this.cachedBytes = 0;
    this.cacheGeneration = `${build}|${keys}`;
  }
  private lastBuild: string | null = null;
  private lastKeys: number | null = null;

  private async load(domain: string): Promise<Lookup> {
    const { keySet } = this.keys.get();
    const bytes = await this.source.read(domain);
    if (bytes === null) {
      if (this.absent.size >= MAX_ABSENT) this.absent.clear();
      this.absent.add(domain);
      return { kind: 'absent' };
    }
    checkRecord(domain, bytes, keySet);
    const record = { bytes, etag: strongEtag(bytes), used: false };
    this.remember(domain, record);
    return { kind: 'record', record };
  }

  private remember(domain: string, record: CachedRecord): void {
    const size = entrySize(domain, record);
    if (size > this.options.cacheBytes) return;
    const previous = this.cache.get(domain);
    if (previous) {
      this.cache.delete(domain);
      this.cachedBytes -= entrySize(domain, previous);
    }
    this.cache.set(domain, record);
    this.cachedBytes += size;
    // Second chance: from the oldest, a record answered since it was last looked at here is
    // unmarked and moved to the newest end (an iterator visits what is re-added behind it, so it
    // is looked at again only after every other record); the first unmarked one goes.
    for (const [oldest, value] of this.cache) {
      if (this.cachedBytes <= this.options.cacheBytes) break;
      this.cache.delete(oldest);
      if (value.used) {
        value.used = false;
        this.cache.set(oldest, value);
      } else {
        this.cachedBytes -= entrySize(oldest, value);
      }
    }
  }
}

/** The serve rule, in order: parses, is the record asked for, has the record's shape, verifies. */
function checkRecord(domain: string, bytes: Buffer, keySet: Parameters<typeof verifyRecordNode>[1]): void {
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
  // An unsigned record is acceptable only in a deployment that signs nothing (empty key set).
  if (verdict.code === 'UNSIGNED' && keySet.keys.length === 0) return;
  throw new RecordUnavailableError(`record for ${domain} failed verification: ${verdict.code} (${verdict.message})`);
}

/** Never-audited domains remembered per build (about 100 bytes each; cleared when full). */
const MAX_ABSENT = 100_000;

/** Bytes an entry accounts for: the record, the key, and the map's overhead, roughly. */
function entrySize(domain: string, record: ServedRecord): number {
  return record.bytes.length + domain.length * 2 + 64;
}

function safeKeyGeneration(keys: KeySetSource): number {
  try {
    return keys.get().generation;
  } catch {
    return -1;
  }
}
