import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import type { KeyEndorsement, PublicJwk } from '@merchant-verify/verifier';
import { canonicalMembers, createRecordVerifier, decodeBase64url, joinMembers, signatureText } from '#shared';
import { CanonicalizationError, InvalidKeyError, SelfCheckFailedError } from '../errors/errors.ts';
import { recordCanonicalParts } from '../rules/record-text.ts';
import { nodeEd25519Verify, verifyEd25519 } from './ed25519.ts';
import { ED25519_PKCS8_PREFIX } from './note-private-key.ts';

/** A private Ed25519 JWK as stored in `keys/` or passed in `MVR_SIGNING_KEY`. */
export interface PrivateJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  d: string;
  kid?: string;
}

/** A loaded signing key: the node:crypto private key, the public key's 32 bytes and its public JWK (kid = RFC 7638 thumbprint). */
export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: Uint8Array;
  publicJwk: PublicJwk;
  /** The endorsements stored with it (the chain from the first key to this one); none for a first key. */
  endorsements?: KeyEndorsement[];
}

/**
 * RFC 7638 JWK thumbprint of an OKP key: SHA-256 over the required members in lexicographic
 * order (`crv`, `kty`, `x`), base64url. It names the key by its content, so a `key_id` cannot
 * point at a different key than the one it was computed from.
 */
export function jwkThumbprint(jwk: { crv: string; kty: string; x: string }): string {
  const json = `{"crv":${JSON.stringify(jwk.crv)},"kty":${JSON.stringify(jwk.kty)},"x":${JSON.stringify(jwk.x)}}`;
  return createHash('sha256').update(json).digest('base64url');
}

/** Generates a new Ed25519 key pair as a private JWK with its thumbprint as `kid`. */
export function generatePrivateJwk(): PrivateJwk & { kid: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' }) as { x: string; d: string };
  const base = { kty: 'OKP' as const, crv: 'Ed25519' as const, x: jwk.x, d: jwk.d };
  return { ...base, kid: jwkThumbprint(base) };
}

/**
 * Loads a private JWK (object or JSON text) into a {@link SigningKey}. Checks that `x` is the
 * public key of `d` and that a `kid`, when given, is the thumbprint; error messages never
 * include key material.
 */
export function loadSigningKey(input: unknown): SigningKey {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new InvalidKeyError('signing key is not valid JSON (expected a private Ed25519 JWK)');
    }
  }
  const jwk = value as Partial<PrivateJwk>;
  if (typeof jwk !== 'object' || jwk === null || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') {
    throw new InvalidKeyError('signing key must be a JWK with kty "OKP" and crv "Ed25519"');
  }
  if (typeof jwk.d !== 'string') throw new InvalidKeyError('signing key has no private member "d"');
  const seed = decodeBase64url(jwk.d);
  if (seed?.length !== 32) throw new InvalidKeyError('signing key "d" is not 32 bytes of base64url');
  let privateKey: KeyObject;
  try {
    // Loaded from the seed alone (`d`), as PKCS #8: every Node.js line accepts that, where a JWK
    // without `x` is refused by some (Node 26), and `x` is then derived and compared below.
    privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  } catch (cause) {
    throw new InvalidKeyError('signing key is not a valid Ed25519 private key', { cause });
  }
  const x = (createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string }).x;
  if (jwk.x !== undefined && jwk.x !== x) throw new InvalidKeyError('signing key "x" does not match its "d"');
  const kid = jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x });
  if (jwk.kid !== undefined && jwk.kid !== kid) throw new InvalidKeyError(`signing key "kid" is not its RFC 7638 thumbprint (${kid})`);
  const endorsements = (jwk as { endorsements?: unknown }).endorsements;
  if (endorsements !== undefined && !(Array.isArray(endorsements) && endorsements.every((e) => typeof e === 'object' && e !== null)))
    throw new InvalidKeyError('signing key "endorsements" is not an array of objects');
  return {
    kid,
    privateKey,
    publicKey: decodeBase64url(x)!,
    publicJwk: toPublicJwk(x),
    ...(endorsements ? { endorsements: endorsements as KeyEndorsement[] } : {}),
  };
}

/** The published form of a public key given its `x`. */
export function toPublicJwk(x: string): PublicJwk {
  return { kty: 'OKP', crv: 'Ed25519', x, kid: jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x }), use: 'sig', alg: 'EdDSA' };
}

/**
 * Signs a record: Ed25519 over the RFC 8785 bytes of the record without `key_id` and
 * `signature`, then returns the record with both added. Any `key_id`/`signature` already
 * present are replaced, never signed over.
 */
export function signRecord<T extends object>(record: T, key: SigningKey): T & { key_id: string; signature: string } {
  return signRecordChecked(record, key).record;
}

/**
 * {@link signRecord}, plus the signer's self-check: the signature is verified with the public
 * key over the very bytes that were signed, before anyone else sees it (a faulty signer, such as
 * a bit flip in memory, must not publish a record that fails verification downstream). Throws
 * `SELF_CHECK_FAILED` when it does not verify. Returns the stored canonical text as well.
 */
export function signRecordChecked<T extends object>(
  record: T,
  key: SigningKey,
): { record: T & { key_id: string; signature: string }; canonical: string } {
  const { key_id: _k, signature: _s, ...unsigned } = record as T & { key_id?: unknown; signature?: unknown };
  const signed = signUnsignedChecked(unsigned, key);
  return { record: { ...(unsigned as T), key_id: key.kid, signature: signed.signature }, canonical: signed.canonical };
}

/**
 * The signing step of {@link signRecordChecked} for a value that has no `key_id` or `signature`
 * (a freshly derived record): its signature and the stored canonical text, self-checked, without
 * copying the record into a signed object (the build writes only the text).
 */
export function signUnsignedChecked(unsigned: object, key: SigningKey): { signature: string; canonical: string } {
  // Canonicalized once: the signed bytes and the stored bytes are joined from the same parts.
  // A derived record takes the record-shaped writer (same text, a tenth of the cost); anything
  // else the generic one.
  const parts = recordCanonicalParts(unsigned);
  const members = parts ? null : canonicalMembers(unsigned as Record<string, unknown>);
  if (!parts && (members!.has('key_id') || members!.has('signature'))) {
    throw new CanonicalizationError('$', 'a value to sign already has key_id or signature');
  }
  const message = Buffer.from(parts ? parts.head + parts.middle + parts.tail : joinMembers(members!));
  const sig = sign(null, message, key.privateKey);
  if (!verifyEd25519(sig, message, key.publicKey)) throw new SelfCheckFailedError();
  // Buffer's encoder: this module is node-only (node:crypto), and the portable one builds the
  // text from 22 pieces that are flattened again when the record is written.
  const signature = signatureText(sig.toString('base64url'));
  return {
    signature,
    canonical: parts
      ? `${parts.head},"key_id":${JSON.stringify(key.kid)}${parts.middle},"signature":${JSON.stringify(signature)}${parts.tail}`
      : joinMembers(members!, { key_id: key.kid, signature }),
  };
}

/** The record verifier on the service's Ed25519 check (core/crypto/ed25519.ts): for the gateway's hot path, statements and tests. */
export const verifyRecordNode = createRecordVerifier(nodeEd25519Verify);
