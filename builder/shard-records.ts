import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// A build's records, shard by shard, as the index reads them. The build workers append each record
// to a spill file of its shard (one per worker), a write per few dozen records instead of a file
// created per record; the spill folder is removed once the index, map and packs are written.

/** The folder of staging that holds the spill files (`<ab>.<thread>`); never part of a live build. */
export const SPILL_DIR = '.spill';

/** A record's line in a spill file: its domain, a tab, its exact signed text (one line: canonical JSON escapes control characters). */
export function spillLine(domain: string, text: string): string {
  return `${domain}\t${text}\n`;
}

/** One record as the index reads it. */
export interface ShardRecord {
  domain: string;
  text: string;
}

/** A build's records a shard at a time (one shard in memory), each shard's in domain order, a domain audited twice side by side. */
export interface ShardSource {
  /** The shards that hold records, in ascending order. */
  shards(): string[];
  read(shard: string): ShardRecord[];
}

const NL = 0x0a,
  TAB = 0x09;
const byDomain = (a: ShardRecord, b: ShardRecord) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0);

/** The records the workers spilled into `stagingDir`. */
export function spilledRecords(stagingDir: string): ShardSource {
  const dir = join(stagingDir, SPILL_DIR);
  const files = new Map<string, string[]>();
  for (const name of readdirSync(dir)) {
    const shard = name.slice(0, 2);
    files.set(shard, [...(files.get(shard) ?? []), name]);
  }
  return {
    shards: () => [...files.keys()].sort(),
    read: (shard) => {
      const records: ShardRecord[] = [];
      for (const name of files.get(shard) ?? []) {
        // Bytes, each record decoded on its own: a file read as one string of megabytes would be
        // held by every record sliced from it, and freed only by a full collection.
        const bytes = readFileSync(join(dir, name));
        for (let at = 0, nl: number; (nl = bytes.indexOf(NL, at)) >= 0; at = nl + 1) {
          const tab = bytes.indexOf(TAB, at);
          records.push({ domain: bytes.toString('latin1', at, tab), text: bytes.toString('utf8', tab + 1, nl) });
        }
      }
      return records.sort(byDomain);
    },
  };
}

/** The records of a build's per-record tree (`<ab>/<domain>.json`): a build kept from before builds had an index. */
export function recordTree(buildDir: string): ShardSource {
  return {
    shards: () =>
      readdirSync(buildDir)
        .filter((n) => /^[0-9a-f]{2}$/.test(n))
        .sort(),
    read: (shard) =>
      readdirSync(join(buildDir, shard))
        .filter((n) => n.endsWith('.json'))
        .map((n) => ({ domain: n.slice(0, -5), text: readFileSync(join(buildDir, shard, n), 'utf8') }))
        .sort(byDomain),
  };
}
