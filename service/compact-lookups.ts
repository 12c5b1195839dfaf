import { bucketOfHex } from '#shared';
import { InvalidPrefixError, PrefixLengthMismatchError, RecordUnavailableError } from '../core/errors/errors.ts';
import { strongEtag } from '../core/etag.ts';
import { LOOKUP_ANSWERS_FILE } from '../core/layout.ts';
import { CACHE_LIMITS } from '../core/limits.ts';
import type { LogProofs } from './log-proofs.ts';
import type { RecordsService } from './records.ts';

/** One compact answer as served: the build's bytes and their entity tag. */
export interface CompactAnswerBytes {
  bytes: Buffer;
  etag: string;
}

/**
 * Compact private lookups (`GET /v1/lookup` and `GET /v1/lookup/{bits}/{hex}`). The head is the
 * live build's statement with its log proof: the client fetches it first and learns the bucket's
 * bits there. An answer is the build's own bytes for the bucket, one ranged read of its answers
 * file, served as read: nothing is parsed, serialized or hashed per request. Its entity tag needs
 * no hashing either, since the bytes follow from the map root, the bits and the bucket alone.
 * Nothing here is told a domain: only the bucket.
 */
export class CompactLookups {
  /** Answers of the live build as read, least recently asked first, bounded by bytes; emptied when another build goes live. */
  private kept: { build: string; byBucket: Map<string, Promise<CompactAnswerBytes>>; bytes: number } = {
    build: '',
    byBucket: new Map(),
    bytes: 0,
  };

  constructor(
    private readonly records: RecordsService,
    private readonly proofs: LogProofs,
    /** Bytes of answers kept (CACHE_LIMITS.compactAnswerBytes; a setting tests lower). */
    private readonly maxBytes: number = CACHE_LIMITS.compactAnswerBytes,
  ) {}

  /** What the cache holds now. */
  stats(): { build: string | null; answers: number; bytes: number; limitBytes: number } {
    const k = this.kept;
    return { build: k.build || null, answers: k.byBucket.size, bytes: k.bytes, limitBytes: this.maxBytes };
  }

  /** The head as last made: its bytes for one live build and the checkpoint its statement is proven against. */
  private headKept: { build: string; checkpoint: string | null; answer: CompactAnswerBytes } | null = null;

  /**
   * The live build's statement and its log proof (absent where the store keeps no log), as JSON
   * bytes with their entity tag: what a client fetches first and checks answers against. Every
   * private lookup asks it, so its bytes are made once per live build and served checkpoint (read
   * at the records' refresh, never per request): a request compares the two and sends what was made.
   */
  async head(): Promise<CompactAnswerBytes> {
    const m = await this.records.buildMap();
    if (m.statement.lookup?.bits === undefined) throw noCompact(m.build);
    const checkpoint = await this.proofs.liveCheckpoint(m.build);
    const kept = this.headKept;
    if (kept?.build === m.build && kept.checkpoint === checkpoint) return kept.answer;
    const proof = await this.proofs.liveStatementProof(m.statement, checkpoint);
    const bytes = Buffer.from(
      JSON.stringify(proof === null ? { statement: m.statement } : { statement: m.statement, statement_proof: proof }),
    );
    // One head is kept, the live build's: made again only when the build or its checkpoint changes.
    this.headKept = { build: m.build, checkpoint, answer: { bytes, etag: strongEtag(bytes) } };
    return this.headKept.answer;
  }

  /**
   * The answer for `hex` of `bitsText` bits in the live build: PREFIX_LENGTH_MISMATCH when the
   * bits are not the build's, INVALID_PREFIX when the hex is not those bits.
   */
  async answer(bitsText: string, hex: string): Promise<CompactAnswerBytes> {
    const m = await this.records.buildMap();
    const lookup = m.statement.lookup;
    if (lookup?.bits === undefined || lookup.bucket_bytes === undefined) throw noCompact(m.build);
    if (bitsText !== String(lookup.bits))
      throw new PrefixLengthMismatchError(
        `this build's buckets have ${lookup.bits} bits (its statement's lookup.bits): ask /v1/lookup/${lookup.bits}/...`,
      );
    const bucket = bucketOfHex(hex, lookup.bits);
    if (bucket === null)
      throw new InvalidPrefixError(
        `the bucket must be ${Math.ceil(lookup.bits / 4)} lowercase hex digits holding the first ${lookup.bits} bits of SHA-256 of the normalized domain, the bits past them zero`,
      );
    if (this.kept.build !== m.build) this.kept = { build: m.build, byBucket: new Map(), bytes: 0 };
    const cache = this.kept;
    const known = cache.byBucket.get(hex);
    if (known) {
      // Most recently asked last: a Map iterates in insertion order.
      cache.byBucket.delete(hex);
      cache.byBucket.set(hex, known);
      return known;
    }
    const size = lookup.bucket_bytes;
    const etag = `"${m.statement.domain_map.root.slice(0, 22).replace(/[+/=]/g, '_')}.${lookup.bits}.${hex}"`;
    const readOnce = () => this.records.store.readRange(m.build, LOOKUP_ANSWERS_FILE, bucket * size, size);
    // A file the live build's statement promises that reads as missing was read while the records folder was away
    // (the store tells a missing folder only once it looks, which may be after the folder is back): read once more.
    const read = readOnce()
      .then((bytes) => bytes ?? readOnce())
      .then((bytes) => {
        if (!bytes || bytes.length !== size)
          throw new RecordUnavailableError(`build ${m.build}'s ${LOOKUP_ANSWERS_FILE} has no answer ${bucket} of ${size} bytes`);
        return { bytes, etag };
      });
    if (size > this.maxBytes) return read;
    cache.byBucket.set(hex, read);
    cache.bytes += size;
    read.catch(() => {
      if (cache.byBucket.get(hex) !== read) return;
      cache.byBucket.delete(hex);
      cache.bytes -= size;
    });
    for (const oldest of cache.byBucket.keys()) {
      if (cache.bytes <= this.maxBytes) break;
      cache.byBucket.delete(oldest);
      cache.bytes -= size;
    }
    return read;
  }
}

function noCompact(build: string): RecordUnavailableError {
  return new RecordUnavailableError(`build ${build} has no compact lookups (built before them): build again to serve them`);
}
