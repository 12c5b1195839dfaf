/**
 * Keys for the vector generators, made from fixed seeds so that every generator writes its file
 * again byte for byte: an Ed25519 key whose 32-byte seed is SHA-256 of a label, and a record signer
 * (the record scheme: RFC 8785 of the value without `key_id`/`signature`, Ed25519, `ed25519:` +
 * base64url) with the one-key JWK Set that verifies it.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign } from 'node:crypto';
import canonicalize from 'canonicalize';

const sha = (d: string) => createHash('sha256').update(d).digest();
const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');
/** The PKCS #8 prefix of an Ed25519 private key, before its 32-byte seed. */
const PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The Ed25519 private key whose seed is SHA-256 of `label`. */
export function seededKey(label: string): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8, sha(label)]), format: 'der', type: 'pkcs8' });
}

/** The 32 bytes of a private key's public key. */
export function publicOf(key: KeyObject): Buffer {
  return Buffer.from(createPublicKey(key).export({ format: 'jwk' }).x!, 'base64url');
}

/** A record key made from `label`: its kid (RFC 7638), the JWK Set that lists it, and a signer by the record scheme. */
export function recordSigner(label: string) {
  const key = seededKey(label);
  const x = b64url(publicOf(key));
  const kid = b64url(sha(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`));
  const keySet = { keys: [{ kty: 'OKP', crv: 'Ed25519', x, kid, use: 'sig', alg: 'EdDSA' }] };
  const signRecord = <T extends object>(value: T) => ({
    ...value,
    key_id: kid,
    signature: `ed25519:${b64url(sign(null, Buffer.from(canonicalize(value)!), key))}`,
  });
  return { key, kid, keySet, signRecord };
}
