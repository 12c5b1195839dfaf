/**
 * The limits table (core/limits.ts): every kind of file a store or a peer sends is named by its
 * path, and docs/limits.md lists exactly the table's numbers, the bounds of trust work too.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ANSWER_LIMITS, CACHE_LIMITS, quotaUnitsOf, READ_LIMITS, readKindOf, readLimitOf, TRUST_LIMITS } from '../../core/limits.ts';
import { ROOT } from '../support/project.ts';

const size = (bytes: number) =>
  bytes >= 1024 ** 3 ? `${bytes / 1024 ** 3} GiB` : bytes >= 1024 ** 2 ? `${bytes / 1024 ** 2} MiB` : `${bytes / 1024} KiB`;
const time = (ms: number) => (ms >= 60_000 ? `${ms / 60_000} min` : `${ms / 1000} s`);

describe('the limits table', () => {
  it('names the kind of every file a build, a bucket or a log holds, by its path', () => {
    const cases: Record<string, string> = {
      'ab/shop.example.json': 'record',
      'builds/20261101T000000Z-1-abc/ab/shop.example.json': 'record',
      'packs/0f3a0000000000000000000000000000000000000000000000000000000000e1.jsonl': 'packRange',
      'builds/x/packs/0f3a0000000000000000000000000000000000000000000000000000000000e1.jsonl': 'packRange',
      'builds/x/pack-index': 'packIndex',
      'manifest.json': 'manifest',
      'builds/x/statement.json': 'statement',
      'domain-map': 'domainMap',
      'builds/x/merchant-verify-keys.json': 'keySet',
      'kept.json': 'keptList',
      'live.json': 'livePointer',
      'log/checkpoint': 'checkpoint',
      'builds/x/log-checkpoint': 'checkpoint',
      'log/tile/0/000.p/12': 'tile',
      'tile/entries/001': 'tile',
      '/.well-known/merchant-verify-log.vkey': 'logVkey',
      'ab/log.jsonl': 'shardLog',
      'index.jsonl': 'index',
      'changes/20261001T000000Z-1-abc.jsonl': 'changes',
      'something-else.txt': 'other',
    };
    expect(Object.fromEntries(Object.keys(cases).map((path) => [path, readKindOf(path)]))).toEqual(cases);
  });

  it('a deadline setting only shortens a kind deadline, never lengthens it', () => {
    expect(readLimitOf('manifest.json', 300).deadlineMs).toBe(300);
    expect(readLimitOf('manifest.json', 10 * 60_000).deadlineMs).toBe(READ_LIMITS.manifest.deadlineMs);
  });

  it('docs/limits.md lists the same limits as the table, kind by kind', async () => {
    const doc = await readFile(join(ROOT, 'docs', 'limits.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `(\w+)` \| [^|]+ \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => [m[1], m[2]!.trim(), m[3]!.trim()]);
    expect(rows).toEqual(Object.entries(READ_LIMITS).map(([kind, l]) => [kind, size(l.bytes), time(l.deadlineMs)]));
  });

  it('docs/limits.md lists what one API key may take as the table has it', async () => {
    const doc = await readFile(join(ROOT, 'docs', 'limits.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `(\w+)` \| [^|]+ \| (\d+ (?:KiB|MiB|streams|s)) \|$/gm)].map((m) => [m[1], m[2]]);
    const { quotaUnitBytes, streamsPerKey, writeChunkBytes, writeIdleMs } = ANSWER_LIMITS;
    expect(rows).toEqual([
      ['quotaUnitBytes', size(quotaUnitBytes)],
      ['streamsPerKey', `${streamsPerKey} streams`],
      ['writeChunkBytes', size(writeChunkBytes)],
      ['writeIdleMs', time(writeIdleMs)],
    ]);
  });

  it('an answer costs one unit per started quotaUnitBytes, and never less than the one a request costs', () => {
    const unit = ANSWER_LIMITS.quotaUnitBytes;
    expect([0, 1, 64 * 1024, unit, unit + 1, 5 * unit].map(quotaUnitsOf)).toEqual([1, 1, 1, 1, 2, 5]);
  });

  it('docs/limits.md lists the bounds of what the gateway keeps in memory as the table has them', async () => {
    const doc = await readFile(join(ROOT, 'docs', 'limits.md'), 'utf8');
    const rows = [...doc.matchAll(/^- `(\w+)` \((\d+ (?:KiB|MiB))\):/gm)].map((m) => [m[1], m[2]]);
    expect(rows).toEqual(Object.entries(CACHE_LIMITS).map(([name, bytes]) => [name, size(bytes)]));
  });

  it('docs/limits.md lists the bounds of trust work as the table has them', async () => {
    const doc = await readFile(join(ROOT, 'docs', 'limits.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `(\w+)` \| [^|]+ \| (\d+) \|$/gm)].map((m) => [m[1], Number(m[2])]);
    expect(rows).toEqual(Object.entries(TRUST_LIMITS));
  });
});
