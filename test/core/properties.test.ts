/** Properties of canonical JSON (RFC 8785, against a reference) and of base64url, over random inputs (fast-check). */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, canonicalJson, decodeBase64url, encodeBase64url } from '#shared';

const NUM_RUNS = 200;

/** JSON values as they come out of JSON.parse (so -0 is 0), unicode strings included. */
const jsonValue = fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

/** A deterministic PRNG (mulberry32) so a shuffle is reproducible from the fast-check seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Rebuilds every object with its members in a random insertion order (Object.fromEntries: safe for "__proto__"). */
function shuffleKeys(value: unknown, rand: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, rand));
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => [k, shuffleKeys(v, rand)] as const);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [entries[i], entries[j]] = [entries[j]!, entries[i]!];
    }
    return Object.fromEntries(entries);
  }
  return value;
}

/**
 * RFC 8785 Appendix A, written independently as an oracle: ECMAScript JSON.stringify for
 * primitives and member names, members sorted by UTF-16 code units (the default sort), no whitespace.
 */
function referenceCanonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(referenceCanonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${referenceCanonical(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

describe('canonical JSON properties', () => {
  it('ignores member order: shuffled keys give the same canonical text', () => {
    fc.assert(
      fc.property(jsonValue, fc.integer(), (value, seed) => {
        expect(canonicalJson(shuffleKeys(value, prng(seed)))).toBe(canonicalJson(value));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('output parses back (JSON.parse) to a deep-equal value', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(value);
        // And it is a fixed point.
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('agrees with the RFC 8785 Appendix A reference algorithm, and canonicalBytes is its UTF-8', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const text = canonicalJson(value);
        expect(text).toBe(referenceCanonical(value));
        expect(new TextDecoder().decode(canonicalBytes(value))).toBe(text);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('base64url properties', () => {
  it('encode/decode round-trips and matches Buffer base64url', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const text = encodeBase64url(bytes);
        expect(text).toBe(Buffer.from(bytes).toString('base64url'));
        expect(text).toMatch(/^[A-Za-z0-9_-]*$/);
        expect(decodeBase64url(text)).toEqual(bytes);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('decode rejects non-canonical trailing bits', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 100 }).filter((b) => b.length % 3 !== 0),
        fc.integer({ min: 1, max: 15 }),
        (bytes, junk) => {
          const text = encodeBase64url(bytes);
          const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
          const last = alphabet.indexOf(text.at(-1)!);
          // One byte left over: 4 trailing bits in the last character; two bytes: 2.
          const trailingMask = bytes.length % 3 === 1 ? 0b1111 : 0b11;
          const bits = junk & trailingMask;
          if (bits === 0) return;
          const tampered = text.slice(0, -1) + alphabet[last | bits];
          expect(decodeBase64url(tampered)).toBeNull();
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('every accepted text is the one canonical spelling of its bytes', () => {
    const chars = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/='.split(''));
    fc.assert(
      fc.property(fc.string({ unit: chars, maxLength: 12 }), (text) => {
        const bytes = decodeBase64url(text);
        // Accepted exactly when the text is in the alphabet, of a possible length, and is what
        // encoding its (leniently decoded) bytes gives back.
        const canonical =
          /^[A-Za-z0-9_-]*$/.test(text) && text.length % 4 !== 1 && Buffer.from(text, 'base64url').toString('base64url') === text;
        expect(bytes !== null).toBe(canonical);
        if (bytes !== null) expect(encodeBase64url(bytes)).toBe(text);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('decode rejects padding, the standard alphabet, non-ASCII and 4n+1 lengths', () => {
    expect(decodeBase64url('AA==')).toBeNull();
    expect(decodeBase64url('A+')).toBeNull();
    expect(decodeBase64url('A/')).toBeNull();
    expect(decodeBase64url('AÀ')).toBeNull();
    expect(decodeBase64url('AAAAA')).toBeNull();
    expect(decodeBase64url('A')).toBeNull();
    expect(decodeBase64url('')).toEqual(new Uint8Array(0));
    expect(decodeBase64url('AB')).toBeNull(); // 'B' leaves a non-zero trailing bit
    expect(decodeBase64url('AA')).toEqual(new Uint8Array([0]));
  });
});
