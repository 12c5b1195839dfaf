/**
 * parseKeySet, the one key set reader of the gateway, the build, the CLI and the portable verifier:
 * keys of types it does not use are skipped (a key set that gains a post-quantum key still works),
 * private members and malformed Ed25519 keys refuse the whole set.
 */

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { KEY_SET_PATH, parseKeySet } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { encodeBase64url, findKey } from '#shared';
import { generatePrivateJwk, loadSigningKey, toPublicJwk } from '../../core/crypto/signing.ts';
import { thrown } from '../support/thrown.ts';

const key = loadSigningKey(generatePrivateJwk());
const otherKey = loadSigningKey(generatePrivateJwk());
const pub = key.publicJwk;
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const jwkOf = (type: 'rsa' | 'ec' | 'x25519' | 'ed448', part: 'publicKey' | 'privateKey') => {
  const pair =
    type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : type === 'ec'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync(type as 'x25519');
  return { ...(pair[part].export({ format: 'jwk' }) as Record<string, unknown>), kid: `${type}-1` };
};
/** An ML-DSA-65 public key as the JOSE AKP key type spells it (draft-ietf-cose-dilithium): 1952 bytes in `pub`. */
const mlDsaKey = { kty: 'AKP', alg: 'ML-DSA-65', pub: encodeBase64url(randomBytes(1952)), kid: 'pq-1', use: 'sig' };
const rsaPublic = jwkOf('rsa', 'publicKey');
const ecPublic = jwkOf('ec', 'publicKey');
const x25519Public = jwkOf('x25519', 'publicKey');
const ed448Public = jwkOf('ed448', 'publicKey');

describe('parseKeySet: the keys it uses', () => {
  it('accepts a set of public Ed25519 keys and finds them by kid', () => {
    const set = parseKeySet({ keys: [pub, otherKey.publicJwk] });
    expect(set.keys).toHaveLength(2);
    expect(findKey(set, key.kid)).toEqual(pub);
    expect(findKey(set, 'nope')).toBeUndefined();
  });

  it('accepts an empty set (no signing configured)', () => {
    expect(parseKeySet({ keys: [] })).toEqual({ keys: [] });
  });

  it('fills in use and alg when absent, and reads the fully-specified alg "Ed25519" (RFC 9864) as EdDSA', () => {
    const { use: _u, alg: _a, ...bare } = pub;
    expect(parseKeySet({ keys: [bare] }).keys[0]).toEqual(pub);
    expect(parseKeySet({ keys: [{ ...pub, alg: 'Ed25519' }] }).keys[0]).toEqual(pub);
    expect(parseKeySet({ keys: [{ ...pub, key_ops: ['verify'] }] }).keys[0]).toEqual(pub);
  });

  it('the well-known path, and toPublicJwk output accepted as is', () => {
    expect(KEY_SET_PATH).toBe('/.well-known/merchant-verify-keys.json');
    const x = generatePrivateJwk().x;
    expect(parseKeySet({ keys: [toPublicJwk(x)] }).keys[0]).toEqual(toPublicJwk(x));
  });
});

describe('parseKeySet: keys of other types are skipped, as jose does', () => {
  it.each([
    ['an ML-DSA-65 key (kty AKP), as added during a post-quantum migration', mlDsaKey],
    ['an RSA public key', rsaPublic],
    ['an EC P-256 public key', ecPublic],
    ['an OKP X25519 key (key agreement)', x25519Public],
    ['an OKP Ed448 key', ed448Public],
    ['an Ed25519 key for another alg', { ...otherKey.publicJwk, alg: 'ES256' }],
    ['an Ed25519 key for encryption (use enc)', { ...otherKey.publicJwk, use: 'enc' }],
    ['an Ed25519 key whose key_ops leave out verify', { ...otherKey.publicJwk, key_ops: ['sign'] }],
    ['a key with no kty at all', { kid: 'mystery', x: 'abc' }],
    ['a key type not yet invented', { kty: 'FUTURE', crv: 'Ed25519', x: 'not-our-business' }],
  ])('%s: read with it skipped, ours kept in order', (_what, foreign) => {
    expect(parseKeySet({ keys: [foreign, pub, foreign, otherKey.publicJwk] })).toEqual({ keys: [pub, otherKey.publicJwk] });
  });

  it('a set of foreign keys only is read as an empty set', () => {
    expect(parseKeySet({ keys: [mlDsaKey, rsaPublic] })).toEqual({ keys: [] });
  });

  it('a foreign key may share a kid with ours: only ours is looked up by it', () => {
    const set = parseKeySet({ keys: [{ ...mlDsaKey, kid: pub.kid }, pub] });
    expect(findKey(set, pub.kid)).toEqual(pub);
  });
});

describe('parseKeySet: refused whole (INVALID_KEY_SET)', () => {
  const rsaPrivate = jwkOf('rsa', 'privateKey');
  it.each([
    ['an Ed25519 private key (member d)', { keys: [{ ...pub, d: 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A' }] }],
    ['a private key second in the set', { keys: [otherKey.publicJwk, { ...pub, d: '' }] }],
    ['a private key with d undefined (presence counts)', { keys: [{ ...pub, d: undefined }] }],
    ['an RSA private key', { keys: [pub, rsaPrivate] }],
    ['an RSA key with only a CRT member (qi)', { keys: [pub, { ...rsaPublic, qi: 'AQAB' }] }],
    ['an X25519 private key', { keys: [pub, jwkOf('x25519', 'privateKey')] }],
    ['an EC private key', { keys: [pub, jwkOf('ec', 'privateKey')] }],
    ['a symmetric key (kty oct, member k)', { keys: [pub, { kty: 'oct', k: 'c2VjcmV0', kid: 'hmac' }] }],
    ['an ML-DSA private key (member priv)', { keys: [pub, { ...mlDsaKey, priv: encodeBase64url(randomBytes(32)) }] }],
  ])('a private member anywhere: %s', (_what, value) => {
    const error = thrown(() => parseKeySet(value));
    expect(error).toMatchObject({ code: 'INVALID_KEY_SET' });
    expect((error as Error).message).toMatch(/private key \(has "(d|qi|k|priv)"\)/);
  });

  it('names the private member, never its value', () => {
    const error = thrown(() => parseKeySet({ keys: [pub, rsaPrivate] })) as Error;
    expect(error.message).toBe('keys[1] is a private key (has "d"); a key set holds public keys only');
  });

  it.each([
    ['x of the wrong length', { ...pub, x: pub.x.slice(1) }, /x: must be 32 bytes/],
    ['x with padding', { ...pub, x: `${pub.x}=` }, /x: must be 32 bytes/],
    ['x with a standard-base64 character', { ...pub, x: `+${pub.x.slice(1)}` }, /x: must be 32 bytes/],
    ['x with non-zero trailing bits', { ...pub, x: pub.x.slice(0, 42) + B64URL[B64URL.indexOf(pub.x[42]!) + 1] }, /x: must be 32 bytes/],
    ['x missing', { kty: 'OKP', crv: 'Ed25519', kid: 'k' }, /x: must be 32 bytes/],
    [
      'x the identity point (a small-order key: it "verifies" any message)',
      { ...pub, x: encodeBase64url(Uint8Array.of(1, ...new Uint8Array(31))) },
      /x: the public key is a point of small order/,
    ],
    [
      'x a non-canonical encoding (y >= p)',
      { ...pub, x: encodeBase64url(Uint8Array.of(0xee, ...new Uint8Array(30).fill(0xff), 0x7f)) },
      /x: the public key is not a canonical encoding/,
    ],
    ['kid missing', { kty: 'OKP', crv: 'Ed25519', x: pub.x }, /kid: must be a non-empty string/],
    ['kid empty', { ...pub, kid: '' }, /kid: must be a non-empty string/],
  ])('an Ed25519 key that is malformed (our own type, published wrong): %s', (_what, bad, message) => {
    const error = thrown(() => parseKeySet({ keys: [otherKey.publicJwk, bad] }));
    expect(error).toMatchObject({ code: 'INVALID_KEY_SET' });
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/^keys\[1\]/);
  });

  it.each([
    ['a duplicate kid', { keys: [pub, { ...otherKey.publicJwk, kid: pub.kid }] }],
    ['the same key twice', { keys: [pub, pub] }],
    ['a key that is not an object', { keys: ['key'] }],
    ['a null key', { keys: [null] }],
    ['an array as a key', { keys: [[pub]] }],
    ['keys not an array', { keys: pub }],
    ['keys missing', {}],
    ['a bare array', [pub]],
    ['null', null],
    ['a string', '{"keys":[]}'],
  ])('%s', (_what, value) => {
    expect(thrown(() => parseKeySet(value))).toMatchObject({ code: 'INVALID_KEY_SET' });
  });
});
