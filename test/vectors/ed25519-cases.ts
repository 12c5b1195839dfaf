/**
 * The Ed25519 edge cases (decision 0027), signed over any message: ./ed25519-vectors.gen.ts writes
 * them over a record's canonical bytes; the call-site tests sign them over what each call site
 * verifies (a note's text, a cosigned checkpoint). Verdicts are written from what each primitive
 * checks, never by running it (see ./ed25519.md): OpenSSL is cofactorless and checks S < L, and on
 * Node 20 and 22 checks neither the key's encoding nor small order; noble strict is cofactored.
 */
import * as ed from '@noble/ed25519';
import { ED25519_L as L } from '#shared';
import {
  A,
  a,
  challenge,
  ID,
  le,
  le32,
  mul,
  nonce,
  offCurveY,
  P,
  Point,
  SEED,
  sig,
  smallKeyForgery,
  torsion,
  type Vector,
  vector,
} from './ed25519-construct.ts';

/** Every case over `message`, in a fixed order (a small-order key with no forgery over this message is left out). */
export function edgeCases(message: Uint8Array): Vector[] {
  const cases: Vector[] = [];
  const add = (v: Parameters<typeof vector>[1]) => cases.push(vector(message, v));
  const honest = ed.sign(message, SEED);
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
    const forged = smallKeyForgery(point.toBytes(), point, message);
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
    sig: sig(ID, (challenge(ID, A, message) * a) % L),
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
    sig: sig(T8b, (challenge(T8b, A, message) * a) % L),
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
    sig: sig(idNonCanonical, (challenge(idNonCanonical, A, message) * a) % L),
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
    sig: sig(Rmixed, (r1 + challenge(Rmixed, A, message) * a) % L),
    openssl: false,
    noble_strict: true,
    record_verifier: 'BAD_SIGNATURE',
  });
  const Amixed = Point.fromBytes(A).add(torsion[1]!).toBytes();
  for (let i = 0; ; i++) {
    const r = nonce(`mixed key ${i}`);
    const R = Point.BASE.multiply(r).toBytes();
    const k = challenge(R, Amixed, message);
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
      const k = challenge(R, Amixed, message);
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
  return cases;
}
