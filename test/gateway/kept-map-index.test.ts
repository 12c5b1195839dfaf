/**
 * The index a gateway keeps of a past build's domain map (service/map-index.ts): over maps of
 * several chunks, it answers exactly as the whole map does, for every leaf and for hashes between,
 * below and above them, from one chunk read; a chunk that changed or is gone is refused.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHUNK_LEAVES, MapIndex } from '../../service/map-index.ts';

/** `n` distinct random leaves, sorted, in one buffer. */
function leavesOf(n: number): Buffer {
  const hashes = Array.from({ length: n }, () => randomBytes(32)).sort(Buffer.compare);
  return Buffer.concat(hashes.filter((h, i) => i === 0 || !h.equals(hashes[i - 1]!)));
}

/** A reader over the map file's bytes, counting reads. */
function reader(file: Buffer) {
  const reads: number[] = [];
  return {
    reads,
    read: async (start: number, length: number) => {
      reads.push(length);
      return file.subarray(start, start + length);
    },
  };
}

describe('a kept map index', () => {
  it('answers as the whole map does, one chunk read a question, at any size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 * CHUNK_LEAVES + 7 }),
        fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { maxLength: 20 }),
        async (n, others) => {
          const file = leavesOf(n);
          const index = MapIndex.of('b', file);
          const leaves = Array.from({ length: file.length / 32 }, (_, i) => file.subarray(i * 32, (i + 1) * 32));
          const { read, reads } = reader(file);
          // Every chunk's first and last leaf, and one from the middle: all present.
          for (const i of new Set(
            [0, leaves.length - 1, leaves.length >> 1, CHUNK_LEAVES - 1, CHUNK_LEAVES].filter((i) => i >= 0 && i < leaves.length),
          ))
            expect(await index.has(leaves[i]!, read)).toBe(true);
          for (const h of [...others, Buffer.alloc(32), Buffer.alloc(32, 0xff)]) {
            expect(await index.has(h, read)).toBe(leaves.some((l) => l.equals(h)));
          }
          expect(reads.every((length) => length <= CHUNK_LEAVES * 32)).toBe(true);
          expect(index.bytes).toBe(Math.ceil(leaves.length / CHUNK_LEAVES) * 64);
        },
      ),
      { numRuns: 10 },
    );
  });

  it('refuses a chunk that changed since the map was checked, or is gone: STORE_UNAVAILABLE, never "not there"', async () => {
    const file = leavesOf(2 * CHUNK_LEAVES + 5);
    const index = MapIndex.of('b', file);
    const leaf = file.subarray(40 * 32, 41 * 32);
    const changed = Buffer.from(file);
    changed.fill(0, 40 * 32, 41 * 32);
    await expect(index.has(leaf, reader(changed).read)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(index.has(leaf, reader(file.subarray(0, CHUNK_LEAVES * 32 - 1)).read)).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    });
    await expect(index.has(leaf, async () => null)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(await index.has(leaf, reader(file).read)).toBe(true);
  });
});
