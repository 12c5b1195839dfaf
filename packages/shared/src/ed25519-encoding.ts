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

/** An integer below 2^256 as 32 little-endian bytes. */
function littleEndian32(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++, n >>= 8n) out[i] = Number(n & 0xffn);
  return out;
}
const P_BYTES = littleEndian32(P);
const L_BYTES = littleEndian32(ED25519_L);

/**
 * The y-coordinates of the eight points of small order: 1 (the identity), p - 1 (order 2),
 * 0 (the two points of order 4, x = ±sqrt(-1)) and ±Y_ORDER_8 (the four of order 8). Compared with
 * the sign bit cleared, so the "negative zero" spellings of the two points with x = 0 count too.
 */
const SMALL_ORDER_Y = [1n, P - 1n, 0n, Y_ORDER_8, P - Y_ORDER_8].map(littleEndian32);

/**
 * Whether the 32-byte little-endian number a (its top bit cleared when `ignoreTopBit`, the sign of
 * x in a point encoding) is below b. Bytes, not BigInt: this runs on every record the gateway reads.
 */
function below(a: Uint8Array, b: Uint8Array, ignoreTopBit: boolean): boolean {
  for (let i = 31; i >= 0; i--) {
    const byte = i === 31 && ignoreTopBit ? a[i]! & 0x7f : a[i]!;
    if (byte !== b[i]) return byte < b[i]!;
  }
  return false;
}

/** Whether a point encoding has this y (sign bit ignored). */
function hasY(encoding: Uint8Array, y: Uint8Array): boolean {
  for (let i = 0; i < 31; i++) if (encoding[i] !== y[i]) return false;
  return (encoding[31]! & 0x7f) === y[31];
}

/** Why 32 bytes are not an acceptable point encoding (for A or R), or null. */
function pointProblem(bytes: Uint8Array): string | null {
  if (bytes.length !== 32) return `is ${bytes.length} bytes, not 32`;
  if (!below(bytes, P_BYTES, true)) return 'is not a canonical encoding (y is not below 2^255 - 19)';
  if (SMALL_ORDER_Y.some((y) => hasY(bytes, y))) return 'is a point of small order';
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
  if (!below(signature.subarray(32), L_BYTES, false)) return 'S is not below the group order L';
  return null;
}
