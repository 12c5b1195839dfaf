import { createPublicKey, verify } from 'node:crypto';

/** Ed25519 verification by node:crypto, for notes and cosignatures: a key that does not decode verifies nothing. */
export function nodeEd25519VerifyRaw(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return verify(
      null,
      message,
      createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' }),
      signature,
    );
  } catch {
    return false;
  }
}
