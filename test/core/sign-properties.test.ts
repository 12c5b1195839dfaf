/** Properties of signing and verifying records over random inputs (fast-check): round trips, one flipped bit fails, and the signature encoding. */

import { parseKeySet } from '@merchant-verify/verifier';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, canonicalJson, decodeBase64url, encodeBase64url, signatureProblem } from '#shared';
import { generatePrivateJwk, loadSigningKey, signRecord, verifyRecordNode } from '../../core/crypto/signing.ts';

const NUM_RUNS = 200;

const jsonObject = fc
  .dictionary(fc.string({ unit: 'binary', maxLength: 8 }), fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }), { maxKeys: 8 })
  .map((v) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>);

/**
 * Records for the bit-flip property: a realistic record (mostly ASCII text, where a flipped bit
 * usually leaves valid JSON) plus random members, so that most flips yield a different record.
 */
const flipRecord = fc
  .record({
    domain: fc.domain(),
    score: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 100, noNaN: true })),
    flags: fc.array(fc.stringMatching(/^[a-z_]{1,12}$/), { maxLength: 3 }),
    archetype: fc.string({ minLength: 1, maxLength: 20 }),
    extra: fc.jsonValue({ maxDepth: 2 }),
  })
  .map(
    (r) =>
      JSON.parse(JSON.stringify({ schema: 'https://verify.example.com/schemas/verification/v1', status: 'verified', ...r })) as Record<
        string,
        unknown
      >,
  );

const key = loadSigningKey(generatePrivateJwk());
const keySet = parseKeySet({ keys: [key.publicJwk] });
const PREFIX = 'ed25519:';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The record without its signature members, as the verifier sees it. */
function unsignedPart(value: Record<string, unknown>): Record<string, unknown> {
  const { key_id: _k, signature: _s, ...rest } = value;
  return rest;
}

describe('sign and verify properties', () => {
  it('sign then verify holds for random records', () => {
    fc.assert(
      fc.property(jsonObject, (record) => {
        const signed = signRecord(record, key);
        expect(verifyRecordNode(signed, keySet)).toEqual({ valid: true, keyId: key.kid });
        // Through JSON text, as a client receives it.
        expect(verifyRecordNode(JSON.parse(JSON.stringify(signed)), keySet)).toEqual({ valid: true, keyId: key.kid });
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('any single flipped bit in the canonical record bytes never verifies (when it still parses to a different record)', () => {
    let checked = 0;
    fc.assert(
      fc.property(flipRecord, fc.nat(), (record, bitSeed) => {
        const signed = signRecord(record, key);
        const original = canonicalBytes(unsignedPart(signed));
        const bit = bitSeed % (original.length * 8);
        const flipped = original.slice();
        flipped[bit >> 3] = flipped[bit >> 3]! ^ (1 << (bit & 7));

        let text: string;
        let parsed: unknown;
        try {
          text = utf8.decode(flipped);
          parsed = JSON.parse(text);
        } catch {
          return; // not UTF-8 or not JSON any more: nothing to verify
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
          const r = verifyRecordNode(parsed, keySet);
          expect(r.valid).toBe(false);
          return;
        }
        const candidate = { ...(parsed as Record<string, unknown>), key_id: signed.key_id, signature: signed.signature };
        let same = false;
        try {
          same = canonicalJson(unsignedPart(candidate)) === new TextDecoder().decode(original);
        } catch {
          // not canonicalizable (e.g. a lone surrogate from an escape): must be MALFORMED_RECORD below
        }
        if (same) return; // e.g. "\u000f" -> "\u000F": a different spelling of the same value
        checked++;
        const r = verifyRecordNode(candidate, keySet);
        expect(r.valid).toBe(false);
        if (!r.valid) expect(['BAD_SIGNATURE', 'MALFORMED_RECORD']).toContain(r.code);
      }),
      { numRuns: NUM_RUNS },
    );
    // Most flips must have produced a different, still-parseable record (else the property tests nothing).
    expect(checked).toBeGreaterThan(NUM_RUNS / 5);
  });

  it('any single flipped bit in the signature bytes fails: MALFORMED_SIGNATURE when it breaks an encoding rule (S >= L, R non-canonical or of small order), else BAD_SIGNATURE', () => {
    fc.assert(
      fc.property(jsonObject, fc.integer({ min: 0, max: 511 }), (record, bit) => {
        const signed = signRecord(record, key);
        const sig = decodeBase64url(signed.signature.slice(PREFIX.length))!;
        expect(sig).toHaveLength(64);
        sig[bit >> 3] = sig[bit >> 3]! ^ (1 << (bit & 7));
        const r = verifyRecordNode({ ...signed, signature: PREFIX + encodeBase64url(sig) }, keySet);
        expect(r).toMatchObject({ valid: false, code: signatureProblem(sig) ? 'MALFORMED_SIGNATURE' : 'BAD_SIGNATURE' });
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('any single changed character of the signature text fails (BAD_SIGNATURE or MALFORMED_SIGNATURE)', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=. ';
    fc.assert(
      fc.property(fc.integer({ min: 0, max: PREFIX.length + 85 }), fc.constantFrom(...alphabet), (pos, ch) => {
        const signed = signRecord({ a: 1 }, key);
        if (signed.signature[pos] === ch) return;
        const signature = signed.signature.slice(0, pos) + ch + signed.signature.slice(pos + 1);
        const r = verifyRecordNode({ ...signed, signature }, keySet);
        expect(r.valid).toBe(false);
        if (!r.valid) expect(['BAD_SIGNATURE', 'MALFORMED_SIGNATURE']).toContain(r.code);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
