import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { bucketOf, type DomainMap, encodeCompactAnswer } from '#shared';
import { sha256 } from '../core/crypto/hash.ts';
import { writeAll } from '../core/files.ts';
import { LOOKUP_ANSWERS_FILE } from '../core/layout.ts';

/** Bytes gathered before one write: a few answers at a time, never the whole file in memory. */
const WRITE_BYTES = 1024 * 1024;

/** What the build wrote: how many answers, their one size, and the fewest and most audited domains of a bucket. */
export interface CompactAnswersSummary {
  answers: number;
  answerBytes: number;
  smallestBucket: number;
  largestBucket: number;
}

/**
 * Writes every compact answer of a build once, in bucket order, each padded to `bucketBytes`
 * (the statement's `lookup.bucket_bytes`): the gateway serves a bucket's slot as it is. The bytes
 * depend on the map alone, so a mirror that checked the map writes the same file.
 */
export async function writeCompactAnswers(dir: string, map: DomainMap, bits: number, bucketBytes: number): Promise<CompactAnswersSummary> {
  const root = Buffer.from(map.head().root, 'base64');
  const buckets = 2 ** bits;
  const perWrite = Math.max(1, Math.floor(WRITE_BYTES / bucketBytes));
  let smallest = Number.POSITIVE_INFINITY;
  let largest = 0;
  const file = await open(join(dir, LOOKUP_ANSWERS_FILE), 'w', 0o644);
  try {
    for (let from = 0; from < buckets; from += perWrite) {
      const chunk = Buffer.alloc(Math.min(perWrite, buckets - from) * bucketBytes);
      for (let bucket = from; bucket < from + chunk.length / bucketBytes; bucket++) {
        const run = map.bucketRun(bits, bucket);
        const inBucket = run.entries.filter((e) => bucketOf(e, bits) === bucket).length;
        smallest = Math.min(smallest, inBucket);
        largest = Math.max(largest, inBucket);
        chunk.set(encodeCompactAnswer(sha256, { bits, bucket, ...run, root }, map.size, bucketBytes), (bucket - from) * bucketBytes);
      }
      await writeAll(file, chunk);
      // A build of ten million domains writes 65,536 answers: let the process breathe between writes.
      await nextTurn();
    }
  } finally {
    await file.close();
  }
  return { answers: buckets, answerBytes: bucketBytes, smallestBucket: smallest, largestBucket: largest };
}
