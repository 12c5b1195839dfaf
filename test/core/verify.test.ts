import { type KeySet, parseKeySet } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { ED25519_L, encodeBase64url } from '#shared';
import { generatePrivateJwk, loadSigningKey, signRecord, verifyRecordNode } from '../../core/crypto/signing.ts';
import { defaultSchemaUrl, unverifiedRecord } from '../../core/rules/record.ts';

const key = loadSigningKey(generatePrivateJwk());
const otherKey = loadSigningKey(generatePrivateJwk());
const keySet: KeySet = parseKeySet({ keys: [key.publicJwk, otherKey.publicJwk] });

const ctx = { issuer: 'verify.example.com', schemaUrl: defaultSchemaUrl('verify.example.com'), issuedAt: '2026-02-01T00:00:00.000Z' };
const record = unverifiedRecord('example.com', ctx);
const signed = signRecord(record, key);

function expectFailure(result: ReturnType<typeof verifyRecordNode>, code: string): void {
  expect(result.valid).toBe(false);
  expect(result).toMatchObject({ valid: false, code });
}

describe('verifyRecordNode: valid', () => {
  it('a signed record verifies and names its key', () => {
    expect(verifyRecordNode(signed, keySet)).toEqual({ valid: true, keyId: key.kid });
  });

  it('member order does not matter (canonical bytes)', () => {
    const reversed = Object.fromEntries(Object.entries(signed).reverse());
    expect(verifyRecordNode(reversed, keySet)).toEqual({ valid: true, keyId: key.kid });
  });

  it('a record round-tripped through JSON text verifies', () => {
    expect(verifyRecordNode(JSON.parse(JSON.stringify(signed)), keySet)).toMatchObject({ valid: true });
  });

  it('signRecord replaces (never signs over) an existing key_id and signature', () => {
    const resigned = signRecord({ ...signed, key_id: 'junk', signature: 'junk' }, otherKey);
    expect(resigned.key_id).toBe(otherKey.kid);
    expect(verifyRecordNode(resigned, keySet)).toEqual({ valid: true, keyId: otherKey.kid });
  });

  it('signRecord does not mutate its input', () => {
    const input = { ...record };
    signRecord(input, key);
    expect(input).toEqual(record);
    expect('signature' in input).toBe(false);
  });
});

describe('verifyRecordNode: UNSIGNED', () => {
  it('no signature and no key_id', () => {
    expectFailure(verifyRecordNode(record, keySet), 'UNSIGNED');
  });

  it('no signature, even with an empty key set', () => {
    expectFailure(verifyRecordNode(record, { keys: [] }), 'UNSIGNED');
  });

  it('presence is checked, not truthiness: signature "" is MALFORMED_SIGNATURE, not UNSIGNED', () => {
    expectFailure(verifyRecordNode({ ...signed, signature: '' }, keySet), 'MALFORMED_SIGNATURE');
  });

  it('signature present but undefined is not UNSIGNED', () => {
    const r = verifyRecordNode({ ...signed, signature: undefined }, keySet);
    expect(r.valid).toBe(false);
    expect(r).not.toMatchObject({ code: 'UNSIGNED' });
  });
});

describe('verifyRecordNode: MALFORMED_RECORD', () => {
  it('key_id without signature', () => {
    const { signature: _s, ...noSig } = signed;
    expectFailure(verifyRecordNode(noSig, keySet), 'MALFORMED_RECORD');
  });

  it('signature without key_id', () => {
    const { key_id: _k, ...noKid } = signed;
    expectFailure(verifyRecordNode(noKid, keySet), 'MALFORMED_RECORD');
  });

  it('key_id empty or not a string', () => {
    expectFailure(verifyRecordNode({ ...signed, key_id: '' }, keySet), 'MALFORMED_RECORD');
    expectFailure(verifyRecordNode({ ...signed, key_id: 42 }, keySet), 'MALFORMED_RECORD');
    expectFailure(verifyRecordNode({ ...signed, key_id: null }, keySet), 'MALFORMED_RECORD');
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['an array', [signed]],
    ['a string', JSON.stringify(signed)],
    ['a number', 1],
    ['a boolean', true],
  ])('not an object: %s', (_what, value) => {
    expectFailure(verifyRecordNode(value, keySet), 'MALFORMED_RECORD');
  });

  it('a record that is not canonicalizable (NaN member) with a well-formed signature', () => {
    expectFailure(verifyRecordNode({ ...signed, score: NaN }, keySet), 'MALFORMED_RECORD');
  });
});

describe('verifyRecordNode: UNKNOWN_KEY', () => {
  it('key_id not in the set', () => {
    const r = verifyRecordNode({ ...signed, key_id: 'no-such-key' }, keySet);
    expectFailure(r, 'UNKNOWN_KEY');
    expect(r).toMatchObject({ keyId: 'no-such-key' });
  });

  it('an empty key set', () => {
    expectFailure(verifyRecordNode(signed, { keys: [] }), 'UNKNOWN_KEY');
  });

  it('the signer retired from the set', () => {
    expectFailure(verifyRecordNode(signed, parseKeySet({ keys: [otherKey.publicJwk] })), 'UNKNOWN_KEY');
  });

  it('a key in the set whose x is malformed (set built without parseKeySet)', () => {
    const broken: KeySet = { keys: [{ ...key.publicJwk, x: 'AAAA' }] };
    expectFailure(verifyRecordNode(signed, broken), 'UNKNOWN_KEY');
  });

  it('is checked before the signature text', () => {
    expectFailure(verifyRecordNode({ ...signed, key_id: 'nope', signature: 'garbage' }, keySet), 'UNKNOWN_KEY');
  });
});

describe('verifyRecordNode: MALFORMED_SIGNATURE', () => {
  const b64 = signed.signature.slice('ed25519:'.length);
  const sigBytes = Buffer.from(b64, 'base64url');

  it.each([
    ['wrong prefix', `ed448:${b64}`],
    ['upper-case prefix', `ED25519:${b64}`],
    ['no prefix', b64],
    ['prefix only', 'ed25519:'],
    ['prefix with a space', `ed25519: ${b64}`],
    ['a standard-base64 "+"', `ed25519:+${b64.slice(1)}`],
    ['a standard-base64 "/"', `ed25519:/${b64.slice(1)}`],
    ['standard base64 with padding', `ed25519:${sigBytes.toString('base64')}`],
    ['padding', `ed25519:${b64}==`],
    ['a character outside the alphabet', `ed25519:${b64.slice(0, -1)}!`],
    ['63 bytes', `ed25519:${encodeBase64url(sigBytes.subarray(0, 63))}`],
    ['65 bytes', `ed25519:${encodeBase64url(Buffer.concat([sigBytes, Buffer.from([0])]))}`],
    ['32 bytes', `ed25519:${encodeBase64url(sigBytes.subarray(0, 32))}`],
    ['impossible length (4n+1 characters)', `ed25519:${b64}A`],
    ['non-zero trailing bits', `ed25519:${b64.slice(0, -1)}${b64.endsWith('B') ? 'C' : 'B'}`],
    ['trailing newline', `ed25519:${b64}\n`],
  ])('%s', (_what, signature) => {
    expectFailure(verifyRecordNode({ ...signed, signature }, keySet), 'MALFORMED_SIGNATURE');
  });

  it('signature not a string', () => {
    expectFailure(verifyRecordNode({ ...signed, signature: 42 }, keySet), 'MALFORMED_SIGNATURE');
    expectFailure(verifyRecordNode({ ...signed, signature: null }, keySet), 'MALFORMED_SIGNATURE');
    expectFailure(verifyRecordNode({ ...signed, signature: [signed.signature] }, keySet), 'MALFORMED_SIGNATURE');
  });

  it('the 86-character signature ends in a character with zero trailing bits (sanity of the case above)', () => {
    expect(b64).toHaveLength(86);
    expect('AQgw'.includes(b64.at(-1)!)).toBe(true);
  });
});

describe('verifyRecordNode: BAD_SIGNATURE', () => {
  it.each([
    ['a changed member', { score: 0 }],
    ['a changed nested member', { evidence: { ...record.evidence, coverage: 0.5 } }],
    ['a changed domain', { domain: 'example.org' }],
    ['an added member', { extra: true }],
    ['a changed type (null -> 0)', { tier: 0 }],
  ])('%s', (_what, patch) => {
    expectFailure(verifyRecordNode({ ...signed, ...patch }, keySet), 'BAD_SIGNATURE');
  });

  it('a removed member', () => {
    const { archetype: _a, ...rest } = signed;
    expectFailure(verifyRecordNode(rest, keySet), 'BAD_SIGNATURE');
  });

  it('the signature of another record', () => {
    const other = signRecord(unverifiedRecord('example.org', ctx), key);
    expectFailure(verifyRecordNode({ ...signed, signature: other.signature }, keySet), 'BAD_SIGNATURE');
  });

  it('a signature by another key in the set, claimed as this key', () => {
    const byOther = signRecord(record, otherKey);
    expectFailure(verifyRecordNode({ ...byOther, key_id: key.kid }, keySet), 'BAD_SIGNATURE');
  });

  it('a signature by a key, claimed under the kid of that key but a set that maps the kid to another x', () => {
    const impostor: KeySet = { keys: [{ ...otherKey.publicJwk, kid: key.kid }] };
    expectFailure(verifyRecordNode(signed, impostor), 'BAD_SIGNATURE');
  });

  it('all-zero signature bytes', () => {
    // R = 0...0 is the point (sqrt(-1), 0) of order 4: refused by the encoding rules before any primitive runs.
    expectFailure(
      verifyRecordNode({ ...signed, signature: `ed25519:${encodeBase64url(new Uint8Array(64))}` }, keySet),
      'MALFORMED_SIGNATURE',
    );
  });

  it('the signature with S + L in place of S (the same signature spelled twice)', () => {
    const sig = Buffer.from(signed.signature.slice('ed25519:'.length), 'base64url');
    const s = BigInt(`0x${Buffer.from(sig.subarray(32)).reverse().toString('hex')}`) + ED25519_L;
    const sPlusL = Buffer.from(s.toString(16).padStart(64, '0'), 'hex').reverse();
    const result = verifyRecordNode(
      { ...signed, signature: `ed25519:${encodeBase64url(Buffer.concat([sig.subarray(0, 32), sPlusL]))}` },
      keySet,
    );
    expectFailure(result, 'MALFORMED_SIGNATURE');
    expect(result).toMatchObject({ message: 'signature is not a canonical Ed25519 signature: S is not below the group order L' });
  });
});
