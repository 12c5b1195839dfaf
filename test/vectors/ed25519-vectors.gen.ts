/**
 * Writes the Ed25519 edge-case vectors (decision 0027), reproducibly:
 *
 *   npx tsx test/vectors/ed25519-vectors.gen.ts        # writes ed25519-edge-cases.json
 *
 * The expected verdicts are written from what each primitive checks, never by running it here:
 * node:crypto (OpenSSL) is cofactorless (R compared byte for byte with the encoding of
 * [S]B - [k]A) and checks S < L; on Node 20 and 22 it neither checks the public key's encoding nor
 * refuses a point of small order, while Node 24 and 26 refuse a small-order A or R (found when the
 * first version of these files was run on every line: Node 22.23.3 and 24.21.0 both report
 * OpenSSL 3.5.8, yet differ). noble_strict decodes A and R strictly (y < p, no "negative zero"),
 * checks S < L, refuses a small-order A and is cofactored. test/core/ed25519-edge-vectors.test.ts
 * checks them against both primitives on whatever Node line runs it.
 */
import { writeFileSync } from 'node:fs';
import { ED25519_L as L } from '@merchant-verify/verifier/internal/issuer';
import * as ed from '@noble/ed25519';
import {
  A,
  a,
  add,
  challenge,
  constructed,
  ID,
  le,
  le32,
  M,
  mul,
  nonce,
  offCurveY,
  P,
  Point,
  RECORD,
  SEED,
  sig,
  smallKeyForgery,
  torsion,
} from './ed25519-construct.ts';

const honest = ed.sign(M, SEED);
add({
  id: 'honest',
  class: 'valid',
  comment: 'RFC 8032 signature by the seed SHA-512("merchant-verify ed25519 edge cases: signing seed")[0..32]',
  key: A,
  sig: honest,
  openssl: true,
  noble_strict: true,
  record_verifier: 'valid',
});
add({
  id: 's-plus-l',
  class: 'non-canonical S',
  comment: 'the honest signature with S + L in place of S: the same [S]B, a second spelling',
  key: A,
  sig: sig(honest.subarray(0, 32), le(honest.subarray(32)) + L),
  openssl: false,
  noble_strict: false,
  record_verifier: 'MALFORMED_SIGNATURE',
});
add({
  id: 's-plus-15l',
  class: 'non-canonical S',
  comment: 'S + 15L (the top bits of S set)',
  key: A,
  sig: sig(honest.subarray(0, 32), le(honest.subarray(32)) + 15n * L),
  openssl: false,
  noble_strict: false,
  record_verifier: 'MALFORMED_SIGNATURE',
});

// Small-order keys: with S = 0 the cofactorless equation is R = -[k]A, which holds for every
// message when A is the identity: a key set listing that key "signs" anything.
add({
  id: 'identity-key',
  class: 'small-order public key',
  comment: 'A = identity (order 1), R = identity, S = 0: holds for any message under the cofactorless equation',
  key: ID,
  sig: sig(ID, 0n),
  openssl: true,
  noble_strict: false,
  record_verifier: 'INVALID_KEY_SET',
});
for (const [order, point] of [
  [2, torsion[4]!],
  [4, torsion[2]!],
  [8, torsion[1]!],
] as const) {
  const forged = smallKeyForgery(point.toBytes(), point);
  if (forged)
    add({
      id: `order-${order}-key`,
      class: 'small-order public key',
      comment: `A of order ${order} (a multiple of [L]P, P the first point with y = 2, 3, ... that decodes), S = 0, R the torsion point with R = -[k]A`,
      key: point.toBytes(),
      sig: forged,
      openssl: true,
      noble_strict: false,
      record_verifier: 'INVALID_KEY_SET',
    });
}
add({
  id: 'identity-key-non-canonical',
  class: 'non-canonical public key',
  comment: 'A = the identity spelled with y = p + 1 (y >= p), R = identity, S = 0',
  key: le32(P + 1n),
  sig: sig(ID, 0n),
  openssl: true,
  noble_strict: false,
  record_verifier: 'INVALID_KEY_SET',
});
add({
  id: 'identity-key-negative-zero',
  class: 'non-canonical public key',
  comment: 'A = the identity with the sign bit set (x = 0 is not negative), R = identity, S = 0',
  key: le32(1n | (1n << 255n)),
  sig: sig(ID, 0n),
  openssl: true,
  noble_strict: false,
  record_verifier: 'INVALID_KEY_SET',
});

// Small-order and non-canonical R under the honest key: S = [k]a, so [S]B = [k]A and the
// equation leaves exactly R (cofactorless: R must be the identity; cofactored: any small R).
add({
  id: 'identity-r',
  class: 'small-order R',
  comment: 'honest key, R = identity, S = k·a mod L: both equations hold',
  key: A,
  sig: sig(ID, (challenge(ID, A) * a) % L),
  openssl: true,
  noble_strict: true,
  record_verifier: 'MALFORMED_SIGNATURE',
});
const T8b = torsion[1]!.toBytes();
add({
  id: 'order-8-r',
  class: 'small-order R',
  comment: 'honest key, R of order 8, S = k·a mod L: only the cofactored equation holds',
  key: A,
  sig: sig(T8b, (challenge(T8b, A) * a) % L),
  openssl: false,
  noble_strict: true,
  record_verifier: 'MALFORMED_SIGNATURE',
});
const idNonCanonical = le32(P + 1n);
add({
  id: 'identity-r-non-canonical',
  class: 'non-canonical R',
  comment: 'honest key, R = the identity spelled with y = p + 1, S = k·a mod L (k over those bytes)',
  key: A,
  sig: sig(idNonCanonical, (challenge(idNonCanonical, A) * a) % L),
  openssl: false,
  noble_strict: false,
  record_verifier: 'MALFORMED_SIGNATURE',
});

// Mixed order: a torsion component on R or on A.
const r1 = nonce('mixed R');
const Rmixed = Point.BASE.multiply(r1).add(torsion[1]!).toBytes();
add({
  id: 'mixed-order-r',
  class: 'mixed-order R',
  comment: 'honest key, R = [r]B + T (T of order 8), S = r + k·a mod L: only the cofactored equation holds (a signer can make these)',
  key: A,
  sig: sig(Rmixed, (r1 + challenge(Rmixed, A) * a) % L),
  openssl: false,
  noble_strict: true,
  record_verifier: 'BAD_SIGNATURE',
});
const Amixed = Point.fromBytes(A).add(torsion[1]!).toBytes();
for (let i = 0; ; i++) {
  const r = nonce(`mixed key ${i}`);
  const R = Point.BASE.multiply(r).toBytes();
  const k = challenge(R, Amixed);
  if (k % 8n === 0n) continue;
  add({
    id: 'mixed-order-key-cofactored-only',
    class: 'mixed-order public key',
    comment: `A = [a]B + T (T of order 8), R = [r]B, S = r + k·a mod L with k not a multiple of 8 (nonce label "mixed key ${i}"): [k]T is left over, so only the cofactored equation holds`,
    key: Amixed,
    sig: sig(R, (r + k * a) % L),
    openssl: false,
    noble_strict: true,
    record_verifier: 'BAD_SIGNATURE',
  });
  break;
}
search: for (let i = 0; ; i++) {
  const r = nonce(`mixed key exact ${i}`);
  for (const t of torsion.slice(1)) {
    const R = Point.BASE.multiply(r).add(t).toBytes();
    const k = challenge(R, Amixed);
    if (!t.add(mul(torsion[1]!, k)).is0()) continue;
    add({
      id: 'mixed-order-key-exact',
      class: 'mixed-order public key',
      comment: `A = [a]B + T, R = [r]B + T' with T' = -[k]T (nonce label "mixed key exact ${i}"), S = r + k·a mod L: both equations hold`,
      key: Amixed,
      sig: sig(R, (r + k * a) % L),
      openssl: true,
      noble_strict: true,
      record_verifier: 'valid',
    });
    break search;
  }
}
const off = le32(offCurveY());
add({
  id: 'key-off-curve',
  class: 'public key not on the curve',
  comment: 'A = the first y = 2, 3, ... with no x on the curve, the honest R and S',
  key: off,
  sig: honest,
  openssl: false,
  noble_strict: false,
  record_verifier: 'BAD_SIGNATURE',
});
add({
  id: 'r-off-curve',
  class: 'R not on the curve',
  comment: 'honest key, R = that same y, the honest S',
  key: A,
  sig: sig(off, le(honest.subarray(32))),
  openssl: false,
  noble_strict: false,
  record_verifier: 'BAD_SIGNATURE',
});

writeFileSync(
  new URL('./ed25519-edge-cases.json', import.meta.url),
  `${JSON.stringify({ description: 'Ed25519 edge cases over one record (decision 0027). Hex byte strings. message is the RFC 8785 bytes of record; node_crypto (by Node.js line) and noble_strict are the verdicts of the two primitives as this project calls them; record_verifier what both record verifiers answer for the record signed so, its key set listing public_key (INVALID_KEY_SET: the key set is refused). See test/vectors/ed25519.md.', record: RECORD, vectors: constructed }, null, 1)}\n`,
);
