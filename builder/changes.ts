import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CHANGES_DIR, INDEX_FILE } from '../core/layout.ts';
import type { VerificationRecord } from '../core/rules/record.ts';
import type { ChangeEntry, Verdict } from '../core/schemas/history.ts';
import { LineFile } from './line-file.ts';
import { recordTree, type ShardSource } from './shard-records.ts';

interface IndexLine extends Verdict {
  domain: string;
  /** The record's shard (`ab`): the index is in shard, then domain, order. */
  shard: string;
}

/** Writes a line, waiting when the stream's buffer is full, so memory stays flat. */
async function write(out: WriteStream, line: string): Promise<void> {
  if (!out.write(line)) await once(out, 'drain');
}

async function close(out: WriteStream): Promise<void> {
  out.end();
  await once(out, 'finish');
}

/** A record's line in a build's index (`index.jsonl`): its shard, domain, status, tier and score. A mirror writes its index with it too. */
export function indexLine(shard: string, r: Pick<VerificationRecord, 'domain' | 'status' | 'tier' | 'score'>): string {
  return `${JSON.stringify({ shard, domain: r.domain, status: r.status, tier: r.tier, score: r.score })}\n`;
}

/**
 * Writes a build's index: one line per record (domain, status, tier, score), shard by shard and
 * in domain order within a shard, one shard's records in memory at a time (a few thousand at 1M
 * records), so memory stays flat however large the build. `onRecord` sees each record's text (and the
 * record it parses to, and its bytes, valid until the shard ends), in the index's order; `onShardEnd`
 * is called once a shard's records are all handed over.
 * A domain met twice is indexed once and returned among `duplicates` (the build then refuses).
 */
export async function writeIndex(
  buildDir: string,
  source: ShardSource,
  onShardEnd?: () => void,
  onRecord?: (text: string, domain: string, record: VerificationRecord, bytes: Buffer) => void,
): Promise<{ runs: ShardRun[]; duplicates: Set<string> }> {
  const out = new LineFile(join(buildDir, INDEX_FILE));
  const runs: ShardRun[] = [];
  const duplicates = new Set<string>();
  let first = 0;
  try {
    for (const shard of source.shards()) {
      const records = source.read(shard).filter((r, i, all) => {
        if (i === 0 || all[i - 1]!.domain !== r.domain) return true;
        duplicates.add(r.domain);
        return false;
      });
      const start = out.bytes;
      for (const { domain, bytes } of records) {
        const text = bytes.toString('utf8');
        const r = JSON.parse(text) as VerificationRecord;
        onRecord?.(text, domain, r, bytes);
        out.write(indexLine(shard, r));
      }
      onShardEnd?.();
      runs.push({ shard, start, end: out.bytes, first });
      first += records.length;
    }
  } finally {
    out.close();
  }
  return { runs, duplicates };
}

/** One shard's lines in the index: bytes `[start, end)`, in domain order, the first of them the index's line number `first` (from 0). */
export interface ShardRun {
  shard: string;
  start: number;
  end: number;
  first: number;
}

/** The index of a build, writing it first for a build made before builds had one. */
async function indexOf(buildDir: string): Promise<string> {
  const file = join(buildDir, INDEX_FILE);
  if (!(await stat(file).catch(() => null))) await writeIndex(buildDir, recordTree(buildDir));
  return file;
}

async function* lines(file: string): AsyncGenerator<IndexLine> {
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity }))
    if (line) yield JSON.parse(line) as IndexLine;
}

const order = (a: IndexLine) => `${a.shard}/${a.domain}`;
const verdict = (l: IndexLine | undefined): Verdict | null => (l ? { status: l.status, tier: l.tier, score: l.score } : null);

/**
 * Writes `changes/<earlier id>.jsonl` into `buildDir`: every domain whose status, tier or score
 * differs from that earlier build, newly audited (`before` null) or dropped (`after` null). Both
 * indexes are streamed side by side in the same order (a merge), so memory stays flat. Returns
 * the number of changes.
 */
export async function writeChanges(buildDir: string, earlierId: string, earlierDir: string): Promise<number> {
  await mkdir(join(buildDir, CHANGES_DIR), { recursive: true });
  const out = createWriteStream(join(buildDir, CHANGES_DIR, `${earlierId}.jsonl`));
  const before = lines(await indexOf(earlierDir));
  const after = lines(join(buildDir, INDEX_FILE));
  let b = await before.next();
  let a = await after.next();
  let count = 0;
  const emit = async (domain: string, was: IndexLine | undefined, now: IndexLine | undefined) => {
    count++;
    const change: ChangeEntry = { domain, before: verdict(was), after: verdict(now) };
    await write(out, `${JSON.stringify(change)}\n`);
  };
  while (!b.done || !a.done) {
    const cmp = b.done ? 1 : a.done ? -1 : order(b.value) < order(a.value) ? -1 : order(b.value) > order(a.value) ? 1 : 0;
    if (cmp < 0) {
      await emit(b.value!.domain, b.value!, undefined);
      b = await before.next();
    } else if (cmp > 0) {
      await emit(a.value!.domain, undefined, a.value!);
      a = await after.next();
    } else {
      const [was, now] = [b.value!, a.value!];
      if (was.status !== now.status || was.tier !== now.tier || was.score !== now.score) await emit(now.domain, was, now);
      b = await before.next();
      a = await after.next();
    }
  }
  await close(out);
  return count;
}
