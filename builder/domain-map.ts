import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  type BuildStatement,
  bucketBitsFor,
  bucketOf,
  buildStatement,
  compactAnswerBytes,
  DomainMap,
  ENTRY_SIZE,
  encodeMapEntry,
  hexPrefix,
  type LookupHead,
  lookupAnswerBytes,
  type PacksHead,
  prefixLengthFor,
  statementText,
} from '#shared';
import { hasher, sha256 } from '../core/crypto/hash.ts';
import { type SigningKey, signRecordChecked } from '../core/crypto/signing.ts';
import { BuildError } from '../core/errors/errors.ts';
import { BUILD_STATEMENT_FILE, DOMAIN_MAP_FILE } from '../core/layout.ts';

/**
 * The leaves of a build's domain map (v2: one 82-byte entry a record, committing to its bytes and
 * verdict), gathered shard by shard as the index is written. A record's shard is the first byte of
 * the same SHA-256 the map sorts by, so sorting within each shard sorts the whole map: no sort over
 * a million entries, no second pass over the records.
 */
export class MapLeaves {
  /** All the leaves in one buffer, written in place shard by shard: 82 bytes a record, never copied; handed over by {@link leaves}. */
  private buffer: Buffer;
  private readonly size: number;
  private filled = 0;
  /** The entries of the shard being read, written in domain-hash order when the next one begins. */
  private shardEntries: Buffer[] = [];
  /** Time spent hashing and sorting, for the build's summary (ms). */
  spentMs = 0;

  /** Records and record bytes per prefix of the build's prefix length, for the size prefix answers are padded to. */
  private readonly perPrefix = new Map<string, { records: number; bytes: number }>();
  private readonly prefixLength: number;
  /** Audited domains per bucket of the build's compact answers (`lookup.bits`), for the one size they are padded to. */
  private readonly perBucket: Uint32Array;
  private readonly bits: number;

  constructor(records: number) {
    this.buffer = Buffer.alloc(records * ENTRY_SIZE);
    this.size = records;
    this.prefixLength = prefixLengthFor(records);
    this.bits = bucketBitsFor(records);
    this.perBucket = new Uint32Array(2 ** this.bits);
  }

  /** One record's exact bytes, domain and parsed record (`writeIndex` hands each over as it reads it): its entry, and counted under its prefix. */
  readonly record = (bytes: Buffer, domain: string, record: unknown): void => {
    const started = performance.now();
    const entry = encodeMapEntry(sha256, record, bytes);
    if (typeof entry === 'string') throw new BuildError(`the record of ${domain} has no map entry: ${entry}`);
    this.shardEntries.push(Buffer.from(entry.buffer, entry.byteOffset, entry.byteLength));
    this.spentMs += performance.now() - started;
    this.perBucket[bucketOf(entry, this.bits)]!++;
    const prefix = hexPrefix(entry, this.prefixLength);
    const p = this.perPrefix.get(prefix) ?? { records: 0, bytes: 0 };
    p.records++;
    p.bytes += bytes.length;
    this.perPrefix.set(prefix, p);
  };

  /** The statement's `lookup`: the prefix length and bucket bits, and the sizes that fit the answer of every prefix and every bucket. */
  lookup(): LookupHead {
    const counts = [...this.perPrefix.values()];
    const maxRecords = Math.max(0, ...counts.map((c) => c.records));
    const maxRecordBytes = Math.max(0, ...counts.map((c) => c.bytes));
    const size = this.size;
    return {
      prefix_length: this.prefixLength,
      answer_bytes: lookupAnswerBytes({ prefixLength: this.prefixLength, size, maxRecords, maxRecordBytes, leafSize: ENTRY_SIZE }),
      bits: this.bits,
      bucket_bytes: compactAnswerBytes(
        size,
        this.perBucket.reduce((a, b) => Math.max(a, b), 0),
      ),
    };
  }

  /** A shard's records are all handed over (shards come in ascending order): its entries are written, in domain-hash order. */
  readonly shard = (): void => {
    const started = performance.now();
    // Domain hashes differ, so their first 32 bytes alone order the entries.
    for (const e of this.shardEntries.sort((a, b) => Buffer.compare(a.subarray(0, 32), b.subarray(0, 32))))
      this.filled += e.copy(this.buffer, this.filled);
    this.shardEntries = [];
    this.spentMs += performance.now() - started;
  };

  /**
   * The leaves, handed over once: this object keeps no reference to them, so they are freed with the
   * map they are written to, before the log (82 MB at a million records that the build otherwise
   * held to its end). Throws when the shards held another number of records than the build wrote.
   */
  leaves(): Buffer {
    this.shard();
    const leaves = this.buffer;
    this.buffer = Buffer.alloc(0);
    if (this.filled !== leaves.length)
      throw new BuildError(`the domain map has ${this.filled / ENTRY_SIZE} leaves, but the build wrote ${this.size} records`);
    return leaves;
  }
}

/**
 * Writes the domain map and the build statement into a build folder. The statement is signed
 * with the record key by the record scheme (and self-checked), or left unsigned in a deployment
 * that signs nothing. The map is read back through the code the gateway loads it with, so a
 * build can never publish a map its readers would refuse.
 */
export async function writeDomainMap(
  buildDir: string,
  leaves: Buffer,
  o: {
    issuer: string;
    build: string;
    issuedAt: string;
    key: SigningKey | null;
    lookup?: LookupHead;
    packs?: PacksHead;
    /** The Oblivious HTTP key configuration's SHA-256 (hex), signed so a gateway cannot give each client a key of its own. */
    ohttpKeyConfigSha256?: string;
  },
): Promise<{ map: DomainMap; statement: BuildStatement }> {
  const map = await DomainMap.fromLeaves(hasher, leaves, { leafSize: ENTRY_SIZE, pause: () => nextTurn() });
  const unsigned: BuildStatement & { ohttp?: { key_config_sha256: string } } = buildStatement({
    issuer: o.issuer,
    build: o.build,
    issuedAt: o.issuedAt,
    map: map.head(),
    lookup: o.lookup,
    packs: o.packs,
  });
  // An additive member: a statement without it verifies as before.
  if (o.ohttpKeyConfigSha256 !== undefined) unsigned.ohttp = { key_config_sha256: o.ohttpKeyConfigSha256 };
  const statement = o.key ? signRecordChecked(unsigned, o.key).record : unsigned;
  await writeFile(join(buildDir, DOMAIN_MAP_FILE), leaves);
  await writeFile(join(buildDir, BUILD_STATEMENT_FILE), statementText(statement));
  return { map, statement };
}
