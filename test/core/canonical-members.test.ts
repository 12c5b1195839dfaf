import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, canonicalMembers, joinMembers } from '../../core/canonical.ts';
import { generatePrivateJwk, loadSigningKey, signRecordChecked, verifyRecordNode } from '../../core/signing.ts';

const key = loadSigningKey(generatePrivateJwk());
const object = fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 12 });

describe('canonical members (sign once, store the same bytes)', () => {
  it('joining the members of an object gives its canonical JSON', () => {
    fc.assert(
      fc.property(object, (o) => {
        expect(joinMembers(canonicalMembers(o))).toBe(canonicalJson(o));
      }),
      { numRuns: 300 },
    );
  });

  it('joining with extra string members equals canonicalizing the object that has them', () => {
    fc.assert(
      fc.property(object, fc.string(), fc.string(), (o, a, b) => {
        const { key_id: _k, signature: _s, ...rest } = o as Record<string, unknown>;
        expect(joinMembers(canonicalMembers(rest), { key_id: a, signature: b })).toBe(canonicalJson({ ...rest, key_id: a, signature: b }));
      }),
      { numRuns: 300 },
    );
  });

  it("signRecordChecked's stored bytes are the canonical JSON of the signed record, and they verify", () => {
    fc.assert(
      fc.property(object, (o) => {
        const signed = signRecordChecked(o, key);
        expect(signed.verified).toBe(true);
        expect(signed.canonical).toBe(canonicalJson(signed.record));
        expect(verifyRecordNode(JSON.parse(signed.canonical), { keys: [key.publicJwk] })).toMatchObject({ valid: true });
      }),
      { numRuns: 200 },
    );
  });
});

describe('the never-audited record template', () => {
  it.each([
    { issuer: 'verify.example.com', schemaUrl: 'https://verify.example.com/schemas/verification/v1' },
    // Fixed parts outside ASCII are encoded once, as UTF-8.
    { issuer: 'vérify.example', schemaUrl: 'https://vérify.example/schémas/verification/v1?ü=1' },
  ])('is byte for byte the UTF-8 of the canonical JSON of unverifiedRecord ($issuer)', async (ctx) => {
    const { unverifiedRecord, unverifiedRecordTemplate } = await import('../../core/record.ts');
    const template = unverifiedRecordTemplate(ctx);
    fc.assert(
      fc.property(fc.domain(), fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9998-01-01T00:00:00Z'), noInvalidDate: true }), (domain, date) => {
        const d = domain.toLowerCase(), issuedAt = date.toISOString();
        expect(template(d, issuedAt).equals(Buffer.from(canonicalJson(unverifiedRecord(d, { ...ctx, issuedAt }))))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
