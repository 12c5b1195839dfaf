import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, canonicalMembers, joinMembers } from '#shared';
import { generatePrivateJwk, loadSigningKey, signRecordChecked, signUnsignedChecked, verifyRecordNode } from '../../core/crypto/signing.ts';
import { unverifiedRecord } from '../../core/rules/record.ts';
import { canonicalRecordText, recordCanonicalParts } from '../../core/rules/record-text.ts';

const key = loadSigningKey(generatePrivateJwk());
const CTX = {
  issuer: 'verify.example.com',
  schemaUrl: 'https://verify.example.com/schemas/verification/v1',
  issuedAt: '2026-11-01T00:00:00.000Z',
};
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
        expect(signed.canonical).toBe(canonicalJson(signed.record));
        expect(verifyRecordNode(JSON.parse(signed.canonical), { keys: [key.publicJwk] })).toMatchObject({ valid: true });
      }),
      { numRuns: 200 },
    );
  });
});

// Any UTF-16 code unit, lone surrogates, quotes, backslashes and controls included.
const text = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 12 });
const anyString = fc.oneof({ arbitrary: fc.string(), weight: 4 }, { arbitrary: text, weight: 1 });
const anyNumber = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 100 }), weight: 6 },
  { arbitrary: fc.double(), weight: 1 },
  { arbitrary: fc.constantFrom(-0, 1e21, 1e-7, 0.1 + 0.2, 5e-324, Number.MAX_VALUE, -1.5e-300), weight: 1 },
);
/** Records of the derived shape, with values anywhere in what JSON (and beyond: NaN, lone surrogates) allows. */
const recordLike = fc.record({
  schema: anyString,
  domain: anyString,
  status: anyString,
  tier: fc.option(anyString),
  score: fc.option(anyNumber),
  max_score: anyNumber,
  sub_scores: fc.record({ visibility: anyNumber, recommendation_rate: anyNumber, technical_readiness: anyNumber }),
  flags: fc.array(anyString, { maxLength: 4 }),
  evidence: fc.record({
    ok: fc.boolean(),
    coverage: anyNumber,
    site_coverage: anyNumber,
    engines_ran: fc.array(anyString, { maxLength: 4 }),
    engines_skipped: fc.array(anyString, { maxLength: 3 }),
    blockers: fc.array(fc.oneof(anyString, fc.dictionary(anyString, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })), { maxLength: 3 }),
  }),
  archetype: anyString,
  first_seen: fc.option(anyString),
  last_audited_at: fc.option(anyString),
  next_audit_at: fc.option(anyString),
  issuer: anyString,
  issued_at: anyString,
});

function canonicalOrError(value: unknown): string {
  try {
    return canonicalJson(value);
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

describe('the record-shaped canonical writer', () => {
  it('gives exactly the canonical JSON of any record of the derived shape, or declines where JCS would refuse', () => {
    fc.assert(
      fc.property(recordLike, fc.string(), fc.string(), (r, keyId, sig) => {
        const parts = recordCanonicalParts(r);
        const expected = canonicalOrError(r);
        if (parts === null) {
          // Declined only where the generic canonicalizer refuses too (NaN, Infinity, lone surrogates).
          expect(expected).toMatch(/^error: /);
          return;
        }
        expect(parts.head + parts.middle + parts.tail).toBe(expected);
        expect(`${parts.head},"key_id":${JSON.stringify(keyId)}${parts.middle},"signature":${JSON.stringify(sig)}${parts.tail}`).toBe(
          canonicalJson({ ...r, key_id: keyId, signature: sig }),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('declines anything but exactly the shape, and the signer then takes the generic path', () => {
    const record = unverifiedRecord('example.com', CTX);
    expect(recordCanonicalParts(record)).not.toBeNull();
    expect(recordCanonicalParts(Object.assign(Object.create(null), record))).not.toBeNull();
    const { issuer: _i, ...missing } = record;
    class Box {
      constructor(readonly v: number) {}
    }
    const offShape: object[] = [
      { ...record, extra: 1 },
      missing,
      { ...record, sub_scores: { ...record.sub_scores, extra: 1 } },
      { ...record, evidence: { ...record.evidence, extra: [] } },
      { ...record, flags: [1] },
      // biome-ignore lint/suspicious/noSparseArray: the hole is the input under test
      { ...record, flags: ['a', , 'b'] },
      { ...record, evidence: { ...record.evidence, blockers: [new Box(1)] } },
      { ...record, score: 10n },
      { ...record, sub_scores: Object.assign(['a', 'b', 'c'], record.sub_scores) },
    ];
    for (const value of offShape) {
      expect(recordCanonicalParts(value)).toBeNull();
      // The generic signer either signs its canonical JSON or refuses it, naming the member.
      let outcome: string;
      try {
        const signed = signRecordChecked(value, key);
        expect(signed.canonical).toBe(canonicalJson(signed.record));
        outcome = 'signed';
      } catch (error) {
        outcome = (error as Error).message;
      }
      expect(outcome).toMatch(/^signed$|\$\./);
    }
  });

  it('signs a derived record with the same bytes as the generic signer', () => {
    const record = unverifiedRecord('bücher.example', {
      ...CTX,
      issuer: 'vérify.example',
      schemaUrl: 'https://vérify.example/schemas/verification/v1',
    });
    const signed = signRecordChecked(record, key);
    const generic = joinMembers(canonicalMembers(record));
    expect(verifyRecordNode(JSON.parse(signed.canonical), { keys: [key.publicJwk] })).toMatchObject({ valid: true });
    expect(signed.canonical).toBe(joinMembers(canonicalMembers(record), { key_id: key.kid, signature: signed.record.signature }));
    expect(generic).toBe(canonicalJson(record));
    // The build's signing step: the same text and signature without the signed copy of the record.
    const step = signUnsignedChecked(record, key);
    expect(step).toEqual({ signature: signed.record.signature, canonical: signed.canonical });
    expect(canonicalRecordText(record)).toBe(canonicalJson(record));
    expect(() => signUnsignedChecked({ ...record, key_id: 'x' }, key)).toThrow(/already has key_id or signature/);
    expect(() => signUnsignedChecked({ a: 1, signature: 'x' }, key)).toThrow(/already has key_id or signature/);
  });

  it('never returns a signature that fails its self-check (a signer whose public half is not its own)', () => {
    const record = unverifiedRecord('example.com', CTX);
    const faulty = { ...key, publicKey: loadSigningKey(generatePrivateJwk()).publicKey };
    for (const attempt of [
      () => signUnsignedChecked(record, faulty),
      () => signRecordChecked(record, faulty),
      () => signRecordChecked({ a: 1 }, faulty),
    ]) {
      expect(attempt).toThrow(expect.objectContaining({ code: 'SELF_CHECK_FAILED' }));
    }
  });
});
