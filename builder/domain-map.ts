import { hash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  type BuildStatement,
  buildStatement,
  DomainMap,
  hexPrefix,
  type LookupHead,
  lookupAnswerBytes,
  type PacksHead,
  prefixLengthFor,
  statementText,
} from '@merchant-verify/verifier/internal/issuer';
import { hasher } from '../core/hash.ts';
import { BUILD_STATEMENT_FILE, DOMAIN_MAP_FILE } from '../core/layout.ts';
import { type SigningKey, signRecordChecked } from '../core/signing.ts';

/**
 * The leaves of a build's domain map, gathered shard by shard as the index is written. A
 * record's shard is the first byte of the same SHA-256 the map sorts by, so sorting within each
 * shard sorts the whole map: no sort over a million hashes, no second pass over the records.
 */
export class MapLeaves {
  /** All the leaves in one buffer, written in place shard by shard: 32 bytes a record, never copied. */
  private readonly buffer: Buffer;
  private filled = 0;
  /** Time spent hashing and sorting, for the build's summary (ms). */
  spentMs = 0;

  /** Records and record bytes per prefix of the build's prefix length, for the size prefix answers are padded to. */
  private readonly perPrefix = new Map<string, { records: number; bytes: number }>();
  private readonly prefixLength: number;

  constructor(records: number) {
    this.buffer = Buffer.alloc(records * 32);
    this.prefixLength = prefixLengthFor(records);
  }

  /** One record's text and domain (`writeIndex` hands each over as it reads it): counted under its prefix. */
  readonly record = (text: string, domain: string): void => {
    const prefix = hexPrefix(hash('sha256', domain, 'buffer'), this.prefixLength);
    const p = this.perPrefix.get(prefix) ?? { records: 0, bytes: 0 };
    p.records++;
    p.bytes += Buffer.byteLength(text.trimEnd());
    this.perPrefix.set(prefix, p);
  };

  /** The statement's `lookup`: the prefix length, and the size that fits the answer of every prefix. */
  lookup(): LookupHead {
    const counts = [...this.perPrefix.values()];
    const maxRecords = Math.max(0, ...counts.map((c) => c.records));
    const maxRecordBytes = Math.max(0, ...counts.map((c) => c.bytes));
    const size = this.buffer.length / 32;
    return {
      prefix_length: this.prefixLength,
      answer_bytes: lookupAnswerBytes({ prefixLength: this.prefixLength, size, maxRecords, maxRecordBytes }),
    };
  }

  /** One shard's domains (in any order); shards must come in ascending order. */
  readonly add = (domains: string[]): void => {
    const started = performance.now();
    for (const h of domains.map((d) => hash('sha256', d, 'buffer')).sort(Buffer.compare)) this.filled += h.copy(this.buffer, this.filled);
    this.spentMs += performance.now() - started;
  };

  /** The leaves; throws when the shards held another number of records than the build wrote. */
  leaves(): Buffer {
    if (this.filled !== this.buffer.length)
      throw new Error(`the domain map has ${this.filled / 32} leaves, but the build wrote ${this.buffer.length / 32} records`);
    return this.buffer;
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
  o: { issuer: string; build: string; issuedAt: string; key: SigningKey | null; lookup?: LookupHead; packs?: PacksHead },
): Promise<{ map: DomainMap; statement: BuildStatement }> {
  const map = await DomainMap.fromLeaves(hasher, leaves, () => nextTurn());
  const unsigned = buildStatement({
    issuer: o.issuer,
    build: o.build,
    issuedAt: o.issuedAt,
    map: map.head(),
    lookup: o.lookup,
    packs: o.packs,
  });
  const statement = o.key ? signRecordChecked(unsigned, o.key).record : unsigned;
  await writeFile(join(buildDir, DOMAIN_MAP_FILE), leaves);
  await writeFile(join(buildDir, BUILD_STATEMENT_FILE), statementText(statement));
  return { map, statement };
}
