import { closeSync, openSync, readSync } from 'node:fs';
import type { ShardRun } from './changes.ts';

// The build index read back in domain order, for the log's entries (builder/log.ts).

/** An index line as the log reads it: its shard and domain, and its line number in the index (from 0). */
export interface IndexedDomain {
  shard: string;
  domain: string;
  line: number;
}

/**
 * The index's lines in domain order: each shard's run is in domain order already, so the runs
 * are merged (a heap of one line a shard), read in small chunks: memory stays flat.
 */
export function* inDomainOrder(indexFile: string, runs: ShardRun[]): Generator<IndexedDomain> {
  const fd = openSync(indexFile, 'r');
  const parse = (text: string, line: number): IndexedDomain => {
    const { shard, domain } = JSON.parse(text) as { shard: string; domain: string };
    return { shard, domain, line };
  };
  try {
    const heads: { line: IndexedDomain; rest: Generator<string> }[] = [];
    for (const run of runs) {
      const rest = linesOf(fd, run.start, run.end);
      const first = rest.next();
      if (!first.done) heads.push({ line: parse(first.value, run.first), rest });
    }
    const heap = new MinHeap(heads, (a, b) => a.line.domain < b.line.domain);
    while (heap.size > 0) {
      const top = heap.peek();
      yield top.line;
      const next = top.rest.next();
      if (next.done) heap.pop();
      else {
        top.line = parse(next.value, top.line.line + 1);
        heap.siftDown(0);
      }
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The lines of bytes `[start, end)` of the file, each decoded only as it is taken: a run's next
 * lines wait as bytes, not strings, while the other runs are merged (strings waiting that long
 * outlived the young generation and filled the old one with garbage).
 */
function* linesOf(fd: number, start: number, end: number): Generator<string> {
  let chunk = Buffer.allocUnsafe(16 * 1024);
  // Bytes [from, to) of the chunk are read and not yet taken.
  let from = 0,
    to = 0;
  for (let at = start; ; ) {
    const nl = chunk.indexOf(0x0a, from);
    if (nl >= 0 && nl < to) {
      if (nl > from) yield chunk.toString('utf8', from, nl);
      from = nl + 1;
      continue;
    }
    if (at >= end) break;
    // The line read so far moves to the front; a line longer than the chunk doubles it.
    if (from > 0) chunk.copy(chunk, 0, from, to);
    to -= from;
    from = 0;
    if (to === chunk.length) chunk = Buffer.concat([chunk, Buffer.allocUnsafe(chunk.length)]);
    const n = readSync(fd, chunk, to, Math.min(chunk.length - to, end - at), at);
    if (n === 0) break;
    at += n;
    to += n;
  }
  if (to > from) yield chunk.toString('utf8', from, to);
}

class MinHeap<T> {
  constructor(
    private readonly items: T[],
    private readonly less: (a: T, b: T) => boolean,
  ) {
    for (let i = Math.floor(items.length / 2) - 1; i >= 0; i--) this.siftDown(i);
  }
  get size(): number {
    return this.items.length;
  }
  peek(): T {
    return this.items[0]!;
  }
  pop(): void {
    const last = this.items.pop()!;
    if (this.items.length > 0) {
      this.items[0] = last;
      this.siftDown(0);
    }
  }
  siftDown(i: number): void {
    const a = this.items;
    for (;;) {
      const l = 2 * i + 1,
        r = l + 1;
      let m = i;
      if (l < a.length && this.less(a[l]!, a[m]!)) m = l;
      if (r < a.length && this.less(a[r]!, a[m]!)) m = r;
      if (m === i) return;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
  }
}
