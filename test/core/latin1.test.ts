/** writeLatin1 (core/latin1.ts) writes what Buffer#write(text, at, 'latin1') writes, and nothing around it. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { writeLatin1 } from '../../core/latin1.ts';

describe('writeLatin1', () => {
  it('writes the bytes Buffer#write writes in latin1, at any offset, and returns the offset after them', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.nat(16), (text, at) => {
        const ours = Buffer.alloc(at + text.length + 8, 0xaa);
        const node = Buffer.alloc(at + text.length + 8, 0xaa);
        expect(writeLatin1(ours, at, text)).toBe(at + text.length);
        node.write(text, at, 'latin1');
        expect(ours.equals(node)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the low byte of a character past Latin-1, as Buffer#write does', () => {
    const out = Buffer.alloc(3);
    writeLatin1(out, 0, 'a\u0141\u00e9');
    expect([...out]).toEqual([0x61, 0x41, 0xe9]);
  });
});
