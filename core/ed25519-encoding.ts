/**
 * The encoding rules every verifier of this project applies to an Ed25519 public key and
 * signature before the primitive runs, so that node:crypto (OpenSSL) and @noble/ed25519 give the
 * same verdict (decision 0027). Portable: bytes and BigInt only, no `node:` imports.
 *
 * OpenSSL decodes a public key without checking that y < p and accepts small-order keys (the
 * identity key verifies every message with R = identity, S = 0); noble's strict mode refuses both,
 * but accepts a small-order R. An honest RFC 8032 signer never produces any of these, so refusing
 * them costs nothing and leaves a single rule: canonical encodings, no point of small order,
 * S below the group order.
 */

/** The field prime p = 2^255 - 19. */
const P = (1n << 255n) - 19n;
/** The order L of the prime-order subgroup (RFC 8032 section 5.1). */
export const ED25519_L = (1n << 252n) + 27742317777372353535851937790883648493n;

/** y of a point of order 8: the point encoded as c7176a70...92ac037a (the others are ±x, p - y). */
const Y_ORDER_8 = 0x7a03ac9277fdc74ec6cc392cfa53202a0f67100d760b3cba4fd84d3d706a17c7n;

/**
 * The y-coordinates of the eight points of small order: 1 (the identity), p - 1 (order 2),
 * 0 (the two points of order 4, x = ±sqrt(-1)) and ±Y_ORDER_8 (the four of order 8). Compared with
 * the sign bit cleared, so the "negative zero" spellings of the two points with x = 0 count too.
 */
const SMALL_ORDER_Y = new Set([1n, P - 1n, 0n, Y_ORDER_8, P - Y_ORDER_8]);

/** Little-endian bytes as an integer. */
function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

/** Why 32 bytes are not an acceptable point encoding (for A or R), or null. */
function pointProblem(bytes: Uint8Array): string | null {
  if (bytes.length !== 32) return `is ${bytes.length} bytes, not 32`;
  const y = littleEndian(bytes) & ((1n << 255n) - 1n);
  if (y >= P) return 'is not a canonical encoding (y is not below 2^255 - 19)';
  if (SMALL_ORDER_Y.has(y)) return 'is a point of small order';
  return null;
}

/**
 * Why an Ed25519 public key cannot be used to verify, or null: not 32 bytes, a non-canonical
 * encoding, or a point of small order. A point off the curve is left to the primitive (both
 * refuse it).
 */
export function publicKeyProblem(publicKey: Uint8Array): string | null {
  const problem = pointProblem(publicKey);
  return problem && `the public key ${problem}`;
}

/**
 * Why 64 bytes are not a signature an RFC 8032 signer produces, or null: R non-canonical or of
 * small order, or S not below L (a second spelling of the same signature: malleability).
 */
export function signatureProblem(signature: Uint8Array): string | null {
  if (signature.length !== 64) return `the signature is ${signature.length} bytes, not 64`;
  const r = pointProblem(signature.subarray(0, 32));
  if (r) return `R ${r}`;
  if (littleEndian(signature.subarray(32)) >= ED25519_L) return 'S is not below the group order L';
  return null;
}
