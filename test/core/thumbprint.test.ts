import { createHash, createPublicKey, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { decodeBase64url, encodeBase64url } from '#shared';
import { generatePrivateJwk, jwkThumbprint, loadSigningKey, toPublicJwk } from '../../core/crypto/signing.ts';
import { thrown } from '../support/thrown.ts';

ed.hashes.sha512 = sha512;

interface Rfc7638File {
  private_key: { kty: 'OKP'; crv: 'Ed25519'; d: string; x: string };
  public_key: { kty: 'OKP'; crv: 'Ed25519'; x: string };
  thumbprint_input: string;
  thumbprint: string;
  signing: {
    protected_header: string;
    protected_header_b64: string;
    payload: string;
    payload_b64: string;
    signing_input: string;
    signature_b64: string;
    jws: string;
  };
}

const v = JSON.parse(readFileSync(new URL('../vectors/rfc7638.json', import.meta.url), 'utf8')) as Rfc7638File;

describe('RFC 7638 thumbprint of the RFC 8037 Ed25519 key (test/vectors/rfc7638.json)', () => {
  it('A.3: jwkThumbprint gives the RFC value', () => {
    expect(jwkThumbprint(v.public_key)).toBe(v.thumbprint);
    expect(jwkThumbprint(v.private_key)).toBe(v.thumbprint);
  });

  it('A.3: the thumbprint is SHA-256 of the exact thumbprint input, base64url', () => {
    expect(v.thumbprint_input).toBe(`{"crv":"Ed25519","kty":"OKP","x":"${v.public_key.x}"}`);
    expect(createHash('sha256').update(v.thumbprint_input).digest('base64url')).toBe(v.thumbprint);
  });

  it('ignores member order and extra members of the JWK', () => {
    const reordered = { x: v.public_key.x, kty: 'OKP', crv: 'Ed25519', kid: 'whatever', use: 'sig' };
    expect(jwkThumbprint(reordered)).toBe(v.thumbprint);
  });

  it('toPublicJwk publishes the thumbprint as kid', () => {
    expect(toPublicJwk(v.public_key.x)).toEqual({ ...v.public_key, kid: v.thumbprint, use: 'sig', alg: 'EdDSA' });
  });
});

describe('RFC 8037 A.1/A.2 key pair via loadSigningKey', () => {
  it('d alone gives the RFC x and the RFC thumbprint as kid', () => {
    const key = loadSigningKey({ kty: 'OKP', crv: 'Ed25519', d: v.private_key.d });
    expect(key.publicJwk.x).toBe(v.public_key.x);
    expect(key.kid).toBe(v.thumbprint);
    expect(key.publicJwk).toEqual({ kty: 'OKP', crv: 'Ed25519', x: v.public_key.x, kid: v.thumbprint, use: 'sig', alg: 'EdDSA' });
  });

  it('accepts the full private JWK, as an object and as JSON text, with the right kid', () => {
    expect(loadSigningKey(v.private_key).kid).toBe(v.thumbprint);
    expect(loadSigningKey(JSON.stringify({ ...v.private_key, kid: v.thumbprint })).kid).toBe(v.thumbprint);
  });

  it('@noble/ed25519 derives the same x from d', () => {
    expect(encodeBase64url(ed.getPublicKey(decodeBase64url(v.private_key.d)!))).toBe(v.public_key.x);
  });

  it.each([
    ['x that is not the public key of d', { ...v.private_key, x: toPublicJwk(generatePrivateJwk().x).x }],
    ['a kid that is not the thumbprint', { ...v.private_key, kid: 'not-the-thumbprint' }],
    ['no d (a public key)', v.public_key],
    ['wrong kty', { ...v.private_key, kty: 'EC' }],
    ['wrong crv', { ...v.private_key, crv: 'X25519' }],
    ['a d of the wrong length', { kty: 'OKP', crv: 'Ed25519', d: 'AAAA' }],
    ['JSON text that does not parse', '{"kty":"OKP",'],
    ['null', null],
    ['a number', 42],
  ])('refuses %s with INVALID_KEY, without key material in the message', (_name, input) => {
    const error = thrown(() => loadSigningKey(input));
    expect(error).toMatchObject({ code: 'INVALID_KEY' });
    expect((error as Error).message).not.toContain(v.private_key.d);
  });

  it('generatePrivateJwk makes a key that loadSigningKey accepts as is', () => {
    const jwk = generatePrivateJwk();
    const key = loadSigningKey(jwk);
    expect(key.kid).toBe(jwk.kid);
    expect(key.kid).toBe(jwkThumbprint(jwk));
    expect(key.publicJwk.x).toBe(jwk.x);
  });
});

describe('RFC 8037 A.4 Ed25519 JWS signature', () => {
  const s = v.signing;

  it('the signing input is base64url(header) "." base64url(payload)', () => {
    const enc = (t: string) => encodeBase64url(new TextEncoder().encode(t));
    expect(enc(s.protected_header)).toBe(s.protected_header_b64);
    expect(enc(s.payload)).toBe(s.payload_b64);
    expect(s.signing_input).toBe(`${s.protected_header_b64}.${s.payload_b64}`);
    expect(s.jws).toBe(`${s.signing_input}.${s.signature_b64}`);
  });

  it('node:crypto reproduces the RFC signature with the A.1 key and verifies it with the A.2 key', () => {
    const key = loadSigningKey(v.private_key);
    const message = Buffer.from(s.signing_input, 'ascii');
    expect(encodeBase64url(sign(null, message, key.privateKey))).toBe(s.signature_b64);
    const pub = createPublicKey({ key: v.public_key, format: 'jwk' });
    expect(verify(null, message, pub, decodeBase64url(s.signature_b64)!)).toBe(true);
  });

  it('@noble/ed25519 reproduces and verifies the RFC signature', () => {
    const message = new TextEncoder().encode(s.signing_input);
    const d = decodeBase64url(v.private_key.d)!;
    expect(encodeBase64url(ed.sign(message, d))).toBe(s.signature_b64);
    expect(ed.verify(decodeBase64url(s.signature_b64)!, message, decodeBase64url(v.public_key.x)!)).toBe(true);
  });
});
