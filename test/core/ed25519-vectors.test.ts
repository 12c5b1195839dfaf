import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseKeySet } from '@merchant-verify/verifier';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, createRecordVerifier, decodeBase64url, encodeBase64url, nobleEd25519Verify } from '#shared';
import { jwkThumbprint, loadSigningKey, signRecord, toPublicJwk, verifyRecordNode } from '../../core/crypto/signing.ts';

ed.hashes.sha512 = sha512;

interface Rfc8032Vector {
  name: string;
  secret_key: string;
  public_key: string;
  message: string;
  signature: string;
}

const vectorFile = JSON.parse(readFileSync(new URL('../vectors/rfc8032-ed25519.json', import.meta.url), 'utf8')) as {
  vectors: Rfc8032Vector[];
};
const vectors = vectorFile.vectors;

const hex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('RFC 8032 section 7.1 Ed25519 vectors (test/vectors/rfc8032-ed25519.json)', () => {
  it('holds TEST 1, TEST 2, TEST 3, TEST 1024 and TEST SHA(abc) with the right sizes', () => {
    expect(vectors.map((v) => v.name)).toEqual(['TEST 1', 'TEST 2', 'TEST 3', 'TEST 1024', 'TEST SHA(abc)']);
    for (const v of vectors) {
      expect(v.secret_key).toMatch(/^[0-9a-f]{64}$/);
      expect(v.public_key).toMatch(/^[0-9a-f]{64}$/);
      expect(v.signature).toMatch(/^[0-9a-f]{128}$/);
      expect(v.message).toMatch(/^([0-9a-f]{2})*$/);
    }
    expect(vectors.map((v) => v.message.length / 2)).toEqual([0, 1, 2, 1023, 64]);
  });

  describe.each(vectors)('$name', (v) => {
    const secret = hex(v.secret_key);
    const publicKey = hex(v.public_key);
    const message = hex(v.message);
    const signature = hex(v.signature);

    it('node:crypto derives the public key and reproduces the signature byte for byte', () => {
      const privateKey = createPrivateKey({
        key: { kty: 'OKP', crv: 'Ed25519', d: encodeBase64url(secret), x: encodeBase64url(publicKey) },
        format: 'jwk',
      });
      const x = (createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string }).x;
      expect(x).toBe(encodeBase64url(publicKey));
      expect(toHex(sign(null, message, privateKey))).toBe(v.signature);
    });

    it('node:crypto verifies the signature, and rejects a flipped bit', () => {
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: encodeBase64url(publicKey) }, format: 'jwk' });
      expect(verify(null, message, key, signature)).toBe(true);
      const bad = signature.slice();
      bad[10] = bad[10]! ^ 0x01;
      expect(verify(null, message, key, bad)).toBe(false);
    });

    it('@noble/ed25519 derives the public key, reproduces the signature and verifies it', () => {
      expect(toHex(ed.getPublicKey(secret))).toBe(v.public_key);
      expect(toHex(ed.sign(message, secret))).toBe(v.signature);
      expect(ed.verify(signature, message, publicKey)).toBe(true);
      const other = new Uint8Array([...message, 0]);
      expect(ed.verify(signature, other, publicKey)).toBe(false);
    });

    it('loadSigningKey accepts the secret as a private JWK and computes the same x', () => {
      const key = loadSigningKey({ kty: 'OKP', crv: 'Ed25519', d: encodeBase64url(secret) });
      expect(key.publicJwk.x).toBe(encodeBase64url(publicKey));
      expect(key.kid).toBe(jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: encodeBase64url(publicKey) }));
      expect(toHex(sign(null, message, key.privateKey))).toBe(v.signature);
    });
  });
});

/** The portable verifier's primitive: @noble/ed25519 (strict, plus the exact equation), no node:crypto. */
const verifyRecordNoble = createRecordVerifier(nobleEd25519Verify);

const sampleRecord = {
  schema: 'https://verify.example.com/schemas/verification/v1',
  domain: 'xn--bcher-kva.example',
  status: 'verified',
  tier: 'gold',
  score: 87.5,
  max_score: 100,
  sub_scores: { visibility: 90, recommendation_rate: 81, technical_readiness: 92 },
  flags: ['missing_signal:reviews'],
  evidence: {
    ok: true,
    coverage: 0.875,
    site_coverage: 1,
    engines_ran: ['a', 'b'],
    engines_skipped: [],
    blockers: [{ kind: 'robots', note: 'Ünïcödé €' }],
  },
  archetype: 'retail',
  first_seen: '2025-01-01T00:00:00.000Z',
  last_audited_at: '2026-01-31T12:00:00.000Z',
  next_audit_at: '2026-02-28T12:00:00.000Z',
  issuer: 'verify.example.com',
  issued_at: '2026-02-01T00:00:00.000Z',
};

describe('cross-implementation: core signing and @noble/ed25519 agree', () => {
  // The TEST 1 secret as the signing key: both sides then hold the same key material.
  const v1 = vectors[0]!;
  const secret = hex(v1.secret_key);
  const key = loadSigningKey({ kty: 'OKP', crv: 'Ed25519', d: encodeBase64url(secret) });
  const keySet = parseKeySet({ keys: [key.publicJwk] });

  it('a record signed with signRecord (node:crypto) verifies with the noble-based verifier', () => {
    const signed = signRecord(sampleRecord, key);
    expect(signed.key_id).toBe(key.kid);
    expect(signed.signature).toMatch(/^ed25519:[A-Za-z0-9_-]{86}$/);
    expect(verifyRecordNoble(signed, keySet)).toEqual({ valid: true, keyId: key.kid });
    expect(verifyRecordNode(signed, keySet)).toEqual({ valid: true, keyId: key.kid });
    // And noble agrees on the raw bytes too.
    const sig = decodeBase64url(signed.signature.slice('ed25519:'.length))!;
    expect(ed.verify(sig, canonicalBytes(sampleRecord), hex(v1.public_key))).toBe(true);
  });

  it('a record signed by hand with noble (canonicalBytes + ed25519: + base64url, key_id = thumbprint) verifies with verifyRecordNode', () => {
    const x = encodeBase64url(ed.getPublicKey(secret));
    const kid = jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x });
    const sig = ed.sign(canonicalBytes(sampleRecord), secret);
    const signed = { ...sampleRecord, key_id: kid, signature: `ed25519:${encodeBase64url(sig)}` };
    const set = parseKeySet({ keys: [toPublicJwk(x)] });
    expect(verifyRecordNode(signed, set)).toEqual({ valid: true, keyId: kid });
    expect(verifyRecordNoble(signed, set)).toEqual({ valid: true, keyId: kid });
    // Deterministic signatures: noble and node produce the same text for the same record and key.
    expect(signed.signature).toBe(signRecord(sampleRecord, key).signature);
  });

  it('both verifiers reject the same tampered record with BAD_SIGNATURE', () => {
    const signed = signRecord(sampleRecord, key);
    const tampered = { ...signed, score: 88 };
    expect(verifyRecordNode(tampered, keySet)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
    expect(verifyRecordNoble(tampered, keySet)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
  });
});
