/**
 * The portable verifier's Ed25519 primitive: @noble/ed25519 in strict mode (RFC 8032 decoding,
 * not ZIP-215), plus the one check it lacks to agree with the gateway's node:crypto (decision 0027).
 */
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { ED25519_L } from './ed25519-encoding.ts';
import type { Ed25519Verify } from './verify.ts';

ed.hashes.sha512 = sha512;

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

/**
 * Whether [S]B = R + [k]A holds exactly, k = SHA-512(R || A || M) mod L: RFC 8032's equation
 * without the cofactor. noble checks [8][S]B = [8]R + [8][k]A, which also holds when R + [k]A
 * and [S]B differ by a point of small order (a key or R with a torsion component: the "Taming
 * the many EdDSAs" vectors 4 and 5); OpenSSL compares R itself and refuses those. Checking the
 * exact equation here makes the two agree. Only called after noble accepted, so A and R decode.
 */
function cofactorlessEquationHolds(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  const rBytes = signature.subarray(0, 32);
  const A = ed.Point.fromBytes(publicKey);
  const R = ed.Point.fromBytes(rBytes);
  const s = littleEndian(signature.subarray(32));
  const k = ed.etc.mod(littleEndian(sha512(ed.etc.concatBytes(rBytes, publicKey, message))), ED25519_L);
  return ed.Point.BASE.multiply(s, false).equals(R.add(A.multiply(k, false)));
}

/**
 * noble strict, then the exact equation. noble throws on an input that is not a valid encoding:
 * that is a failed verification here, not misuse.
 */
export const nobleEd25519Verify: Ed25519Verify = (signature, message, publicKey) => {
  try {
    return ed.verify(signature, message, publicKey, { zip215: false }) && cofactorlessEquationHolds(signature, message, publicKey);
  } catch {
    return false;
  }
};
