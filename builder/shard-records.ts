import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
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

/**
 * One record as the index reads it: its exact signed bytes, decoded only as the index takes it.
 * Bytes, not text: a shard's records wait for the whole shard (the packs write them in another
 * order at its end); as strings they outlived the young generation, and at a million records the
 * main thread's heap grew to twice what it held.
 */
export interface ShardRecord {
  domain: string;
  bytes: Buffer;
}

/** A build's records a shard at a time (one shard in memory), each shard's in domain order, a domain audited twice side by side. */
export interface ShardSource {
  /** The shards that hold records, in ascending order. */
  shards(): string[];
  /** A shard's records; their bytes may be views that the next `read` overwrites. */
  read(shard: string): ShardRecord[];
}

const NL = 0x0a,
  TAB = 0x09;
const byDomain = (a: ShardRecord, b: ShardRecord) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0);

/**
 * The records the workers spilled into `stagingDir`. Every shard is read into the same buffer, grown
 * to the largest: a record's bytes are a view of it, valid until the next `read`. A buffer of a few
 * megabytes allocated a shard, 256 times at a million records, left the allocator's memory in holes
 * it did not give back (RSS about 30 MB over what the process held).
 */
export function spilledRecords(stagingDir: string): ShardSource {
  const dir = join(stagingDir, SPILL_DIR);
  const files = new Map<string, string[]>();
  for (const name of readdirSync(dir)) {
    const shard = name.slice(0, 2);
    files.set(shard, [...(files.get(shard) ?? []), name]);
  }
  let buffer = Buffer.alloc(0);
  return {
    shards: () => [...files.keys()].sort(),
    read: (shard) => {
      const paths = (files.get(shard) ?? []).map((name) => join(dir, name));
      const size = paths.reduce((n, path) => n + statSync(path).size, 0);
      // An eighth more than this shard needs: shards differ by a few percent, so the buffer grows a few times at most.
      if (buffer.length < size) buffer = Buffer.allocUnsafe(size + (size >> 3));
      let filled = 0;
      for (const path of paths) filled += readInto(path, buffer.subarray(filled, size));
      const bytes = buffer.subarray(0, filled);
      const records: ShardRecord[] = [];
      for (let at = 0, nl: number; (nl = bytes.indexOf(NL, at)) >= 0; at = nl + 1) {
        const tab = bytes.indexOf(TAB, at);
        records.push({ domain: bytes.toString('latin1', at, tab), bytes: bytes.subarray(tab + 1, nl) });
      }
      return records.sort(byDomain);
    },
  };
}

/** Reads the file into `into` (its size, which the build's workers no longer change); the bytes read. */
function readInto(path: string, into: Buffer): number {
  const fd = openSync(path, 'r');
  try {
    let n = 0;
    for (let got: number; n < into.length && (got = readSync(fd, into, n, into.length - n, n)) > 0; ) n += got;
    return n;
  } finally {
    closeSync(fd);
  }
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
        .map((n) => ({ domain: n.slice(0, -5), bytes: readFileSync(join(buildDir, shard, n)) }))
        .sort(byDomain),
  };
}
