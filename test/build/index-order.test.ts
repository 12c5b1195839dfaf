import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ShardRun } from '../../builder/changes.ts';
import { inDomainOrder } from '../../builder/index-order.ts';

/** An index of the given shards (each shard's domains sorted, as the build writes them) and its runs. */
function indexOf(shards: string[][]): { text: string; runs: ShardRun[] } {
  let text = '';
  let first = 0;
  const runs: ShardRun[] = [];
  for (const [i, domains] of shards.entries()) {
    const shard = i.toString(16).padStart(2, '0');
    const start = Buffer.byteLength(text);
    for (const domain of [...domains].sort()) text += `${JSON.stringify({ shard, domain, status: 'verified', tier: 'gold', score: 90 })}\n`;
    runs.push({ shard, start, end: Buffer.byteLength(text), first });
    first += domains.length;
  }
  return { text, runs };
}

/** What inDomainOrder must give: every line, in domain order, with its shard and its line number in the index. */
function expected(shards: string[][]) {
  const lines = shards.flatMap((domains, i) => [...domains].sort().map((domain) => ({ shard: i.toString(16).padStart(2, '0'), domain })));
  return lines.map((l, line) => ({ ...l, line })).sort((a, b) => (a.domain < b.domain ? -1 : 1));
}

describe('the index read back in domain order (the log appends in it)', () => {
  it('merges the shards, each read a chunk at a time: lines across chunk ends, a line longer than a chunk, non-ASCII', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mvr-index-order-'));
    try {
      const domain = fc.stringMatching(/^[a-z0-9é.-]{1,40}$/);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.uniqueArray(domain, { maxLength: 400 }), { maxLength: 4 }), async (raw) => {
          // Domains differ across shards too, as a build's do; one is longer than the 16 KiB a run reads at once.
          const seen = new Set<string>();
          const shards = raw.map((ds) => ds.filter((d) => !seen.has(d) && seen.add(d)));
          if (shards[0]) shards[0].push(`${'x'.repeat(20_000)}.example`);
          const { text, runs } = indexOf(shards);
          const file = join(dir, 'index.jsonl');
          await writeFile(file, text);
          expect([...inDomainOrder(file, runs)]).toEqual(expected(shards));
        }),
        { numRuns: 30 },
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
