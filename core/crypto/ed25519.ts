import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { createEd25519Check, type Ed25519Verify, encodeBase64url } from '#shared';

/**
 * The service's one Ed25519 check: records, build statements, the log's signed notes, and
 * cosignatures on both sides of a witness. node:crypto (OpenSSL) behind the encoding rules every
 * verifier of this project applies first (decision 0027: canonical A and R, neither of small
 * order, S below L), because node:crypto alone answers differently by Node line: Node 20 and 22
 * accept a small-order or non-canonical key and a small-order R that Node 24 and the portable
 * verifier refuse. A signature one verifier accepts must be one every verifier accepts.
 */

/** Public key objects by their x: a few keys (the record keys, the log's, the witnesses') verify everything. */
const keyObjects = new Map<string, KeyObject>();
const KEYS_KEPT = 1000;

/**
 * node:crypto's Ed25519 alone, without the encoding rules: only for the record scheme's builders
 * (`createRecordVerifier`, `createAbsenceVerifier`), which run the rules before it, and for the
 * test that records its verdict on each Node line. Anything else calls {@link verifyEd25519}.
 * A key or signature node:crypto cannot take verifies nothing.
 */
export const nodeEd25519Verify: Ed25519Verify = (signature, message, publicKey) => {
  const x = encodeBase64url(publicKey);
  try {
    let keyObject = keyObjects.get(x);
    if (!keyObject) {
      keyObject = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
      if (keyObjects.size >= KEYS_KEPT) keyObjects.clear();
      keyObjects.set(x, keyObject);
    }
    return verify(null, message, keyObject, signature);
  } catch {
    return false;
  }
};

/**
 * The encoding rules, then node:crypto: null when the signature holds, else a coded failure
 * (`UNKNOWN_KEY` for a key no honest signer has, `MALFORMED_SIGNATURE`, `BAD_SIGNATURE`).
 */
export const checkEd25519: ReturnType<typeof createEd25519Check> = createEd25519Check(nodeEd25519Verify);

/**
 * Whether `signature` is an Ed25519 signature of `message` by `publicKey` under the encoding
 * rules: for signed notes and cosignatures (the shape the note readers take), and the signer's
 * self-check.
 */
export function verifyEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  return checkEd25519(signature, message, publicKey, 'Ed25519 key') === null;
}
