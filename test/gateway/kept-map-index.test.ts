/**
 * The index a gateway keeps of a past build's domain map (service/map-index.ts): over maps of
 * several chunks, it answers exactly as the whole map does, for every leaf and for hashes between,
 * below and above them, from one chunk read, for v1 maps (32-byte hashes) and v2 maps (82-byte
 * entries, which it hands back); a chunk that changed or is gone is refused.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHUNK_BYTES, chunkLeaves, MapIndex } from '../../service/map-index.ts';

/** `n` leaves of `size` bytes with distinct random domain hashes (their first 32 bytes), sorted, in one buffer. */
function leavesOf(n: number, size: 32 | 82): Buffer {
  const leaves = Array.from({ length: n }, () => randomBytes(size)).sort((a, b) => Buffer.compare(a.subarray(0, 32), b.subarray(0, 32)));
  return Buffer.concat(leaves.filter((l, i) => i === 0 || !l.subarray(0, 32).equals(leaves[i - 1]!.subarray(0, 32))));
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

describe.each([32, 82] as const)('a kept map index of %i-byte leaves', (size) => {
  const CHUNK_LEAVES = chunkLeaves(size);
  it('answers as the whole map does, one chunk read a question, at any size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 * CHUNK_LEAVES + 7 }),
        fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { maxLength: 20 }),
        async (n, others) => {
          const file = leavesOf(n, size);
          const index = MapIndex.of('b', file, size);
          const leaves = Array.from({ length: file.length / size }, (_, i) => file.subarray(i * size, (i + 1) * size));
          const { read, reads } = reader(file);
          // Every chunk's first and last leaf, and one from the middle: all present.
          for (const i of new Set(
            [0, leaves.length - 1, leaves.length >> 1, CHUNK_LEAVES - 1, CHUNK_LEAVES].filter((i) => i >= 0 && i < leaves.length),
          ))
            expect(await index.position(leaves[i]!.subarray(0, 32), read)).toEqual({ index: i, entry: size === 82 ? leaves[i] : null });
          for (const h of [...others, Buffer.alloc(32), Buffer.alloc(32, 0xff)]) {
            expect(await index.has(h, read)).toBe(leaves.some((l) => l.subarray(0, 32).equals(h)));
          }
          expect(reads.every((length) => length <= CHUNK_BYTES)).toBe(true);
          expect(index.bytes).toBe(Math.ceil(leaves.length / CHUNK_LEAVES) * 64);
        },
      ),
      { numRuns: 10 },
    );
  });

  it('refuses a chunk that changed since the map was checked, or is gone: STORE_UNAVAILABLE, never "not there"', async () => {
    const file = leavesOf(2 * CHUNK_LEAVES + 5, size);
    const index = MapIndex.of('b', file, size);
    const leaf = file.subarray(40 * size, 40 * size + 32);
    const changed = Buffer.from(file);
    // The last byte of the leaf: in a v2 map a changed entry (its record_hash, its verdict) is a changed chunk too.
    changed[41 * size - 1]! ^= 1;
    await expect(index.has(leaf, reader(changed).read)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(index.has(leaf, reader(file.subarray(0, CHUNK_LEAVES * size - 1)).read)).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    });
    await expect(index.has(leaf, async () => null)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(await index.has(leaf, reader(file).read)).toBe(true);
  });
});
