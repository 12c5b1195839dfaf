/**
 * A v2 map entry (packages/shared/src/map-entry.ts): encoded from any record a map holds, it
 * decodes to the record's fields and hashes, it is exactly 82 bytes laid out as decision 0077's
 * table says, and the check "this record is this entry" holds for the record and fails, naming the
 * member, once one bit of the record's bytes or of the entry is flipped.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, decodeMapEntry, ENTRY_SIZE, encodeMapEntry, entryMismatch, formatTimestamp } from '#shared';
import { sha256 } from '../../core/crypto/hash.ts';

const recordArb = fc.record({
  domain: fc.stringMatching(/^[a-z0-9-]{1,20}\.example$/),
  status: fc.constantFrom('verified', 'provisional', 'flagged'),
  tier: fc.constantFrom(null, 'bronze', 'silver', 'gold'),
  score: fc.option(fc.double({ min: 0, max: 100, noNaN: true, noDefaultInfinity: true }), { nil: null }),
  // A record's timestamps: 1970 to the last month whose next month is still a four-digit year.
  next_audit_at: fc.option(fc.integer({ min: 0, max: Date.UTC(9998, 10, 30) }).map(formatTimestamp), { nil: null }),
  signature: fc.string(),
});

describe('a v2 map entry', () => {
  it('round-trips: the record fields and both hashes come back, in 82 bytes', () => {
    fc.assert(
      fc.property(recordArb, (record) => {
        const bytes = canonicalBytes(record);
        const entry = encodeMapEntry(sha256, record, bytes) as Uint8Array;
        expect(entry).toHaveLength(ENTRY_SIZE);
        expect(decodeMapEntry(entry)).toEqual({
          domainHash: new Uint8Array(sha256(new TextEncoder().encode(record.domain))),
          recordHash: new Uint8Array(sha256(bytes)),
          status: record.status,
          tier: record.tier,
          // -0 is a score of 0 (canonical JSON writes both as 0).
          score: record.score === null ? null : record.score + 0,
          nextAuditAt: record.next_audit_at === null ? null : Date.parse(record.next_audit_at),
        });
        expect(entryMismatch(sha256, entry, record, bytes)).toBeNull();
        expect(entryMismatch(sha256, entry, record)).toBeNull();
      }),
    );
  });

  it("one flipped bit in the record's bytes, or in the entry, changes the check's answer", () => {
    fc.assert(
      fc.property(recordArb, fc.nat(), fc.nat({ max: 7 }), fc.nat({ max: ENTRY_SIZE * 8 - 1 }), (record, at, bit, entryBit) => {
        const bytes = canonicalBytes(record);
        const entry = encodeMapEntry(sha256, record, bytes) as Uint8Array;
        const flipped = Uint8Array.from(bytes);
        flipped[at % flipped.length]! ^= 1 << bit;
        expect(entryMismatch(sha256, entry, record, flipped)).toMatch(/record_hash/);
        const altered = Uint8Array.from(entry);
        altered[entryBit >> 3]! ^= 1 << (entryBit & 7);
        expect(entryMismatch(sha256, altered, record, bytes)).toMatch(/domain_hash|record_hash|status|tier|score|next_audit_at/);
      }),
    );
  });

  it('is laid out as the table says (big-endian; -1 for a null score)', () => {
    const record = { domain: 'a.example', status: 'flagged', tier: 'gold', score: null, next_audit_at: '1970-01-01T00:00:01.000Z' };
    const entry = encodeMapEntry(sha256, record, canonicalBytes(record)) as Uint8Array;
    expect(entry[64]).toBe(3);
    expect(entry[65]).toBe(3);
    expect(Buffer.from(entry.subarray(66, 74)).readDoubleBE()).toBe(-1);
    expect(Buffer.from(entry.subarray(74, 82)).readBigInt64BE()).toBe(1000n);
  });

  it('has no entry for a record a map does not hold, and decodes no entry that is not one', () => {
    for (const bad of [null, { domain: 'a.example', status: 'unverified', tier: null, score: null, next_audit_at: null }, { junk: true }])
      expect(typeof encodeMapEntry(sha256, bad, new Uint8Array(0))).toBe('string');
    const good = encodeMapEntry(
      sha256,
      { domain: 'a.example', status: 'verified', tier: null, score: 1, next_audit_at: null },
      new Uint8Array(0),
    );
    expect(decodeMapEntry((good as Uint8Array).subarray(0, 81))).toBeNull();
    for (const [byte, value] of [
      [64, 0],
      [64, 4],
      [65, 4],
    ] as const) {
      const bad = Uint8Array.from(good as Uint8Array);
      bad[byte] = value;
      expect(decodeMapEntry(bad)).toBeNull();
    }
  });
});
