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
import { canonicalBytes, ED25519_L as L } from '@merchant-verify/verifier/issuer';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';

ed.hashes.sha512 = sha512;
const { Point } = ed;
const P = (1n << 255n) - 19n;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const le = (b: Uint8Array): bigint => BigInt(`0x${hex(b.slice().reverse()) || '0'}`);
const le32 = (n: bigint): Uint8Array => Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse());
const mul = (pt: InstanceType<typeof Point>, n: bigint) => pt.multiply(((n % L) + L) % L, false);

type Verdict = 'valid' | 'INVALID_KEY_SET' | 'UNKNOWN_KEY' | 'MALFORMED_SIGNATURE' | 'BAD_SIGNATURE';
interface Vector {
  id: string;
  class: string;
  source: string;
  comment: string;
  public_key: string;
  message: string;
  signature: string;
  /** node:crypto's verdict by Node.js line (OpenSSL as Node calls it). */
  node_crypto: Record<'20' | '22' | '24' | '26', boolean>;
  noble_strict: boolean;
  record_verifier: Verdict;
}

/** Of small order, decoded leniently (any y below 2^255, either sign): noble's isSmallOrder, not this project's list. */
function isSmallOrder(encoding: Uint8Array): boolean {
  try {
    return Point.fromBytes(encoding, true).isSmallOrder();
  } catch {
    return false;
  }
}
/** node:crypto's verdicts from OpenSSL's (Node 20, 22): Node 24 and later also refuse a small-order A or R. */
function nodeCrypto(openssl: boolean, publicKey: Uint8Array, signature: Uint8Array): Vector['node_crypto'] {
  const later = openssl && !isSmallOrder(publicKey) && !isSmallOrder(signature.subarray(0, 32));
  return { '20': openssl, '22': openssl, '24': later, '26': later };
}

// ---------------------------------------------------------------------------------------------
// Constructed over a record: the message is the RFC 8785 bytes of RECORD, so each vector is also
// a record a verifier can be handed (with key_id = RFC 7638 thumbprint of public_key).

const RECORD = {
  schema: 'https://verify.example/schemas/verification/v1',
  domain: 'edge-case.example',
  status: 'verified',
  tier: 'gold',
  score: 91,
  max_score: 100,
  sub_scores: { visibility: 90, recommendation_rate: 92, technical_readiness: 91 },
  flags: [],
  evidence: { ok: true, coverage: 0.9, site_coverage: 1, engines_ran: ['a'], engines_skipped: [], blockers: [] },
  archetype: 'retail',
  first_seen: '2026-01-01T00:00:00.000Z',
  last_audited_at: '2026-10-01T00:00:00.000Z',
  next_audit_at: '2026-11-01T00:00:00.000Z',
  issuer: 'verify.example',
  issued_at: '2026-11-01T00:00:00.000Z',
};
const M = canonicalBytes(RECORD);
const SEED = sha512(utf8('merchant-verify ed25519 edge cases: signing seed')).slice(0, 32);
const { scalar: a, pointBytes: A } = ed.utils.getExtendedPublicKey(SEED);
const nonce = (label: string): bigint => le(sha512(utf8(`merchant-verify ed25519 edge cases: ${label}`))) % L;
const challenge = (R: Uint8Array, key: Uint8Array): bigint => le(sha512(ed.etc.concatBytes(R, key, M))) % L;
const sig = (R: Uint8Array, S: bigint): Uint8Array => ed.etc.concatBytes(R, le32(S));

/** A point of order 8 from the definition: [L]P for the first y = 2, 3, ... that decodes, if [4] of it is not the identity. */
function orderEightPoint(): InstanceType<typeof Point> {
  for (let y = 2n; ; y++) {
    let p;
    try {
      p = Point.fromBytes(le32(y));
    } catch {
      continue;
    }
    const t = p.multiply(L - 1n, false).add(p);
    if (!t.multiply(4n, false).is0()) return t;
  }
}
/** The first y = 2, 3, ... that is no point's y (no x with x^2 = (y^2 - 1) / (d y^2 + 1)). */
function offCurveY(): bigint {
  for (let y = 2n; ; y++) {
    try {
      Point.fromBytes(le32(y));
    } catch {
      return y;
    }
  }
}
const T8 = orderEightPoint();
const torsion = [0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n].map((i) => (i === 0n ? Point.ZERO : T8.multiply(i, false)));
const ID = Point.ZERO.toBytes();

const constructed: Vector[] = [];
const SOURCE = 'constructed by test/vectors/ed25519-vectors.gen.ts over the canonical bytes of `record`';
function add(
  v: Omit<Vector, 'source' | 'message' | 'public_key' | 'signature' | 'node_crypto'> & {
    key: Uint8Array;
    sig: Uint8Array;
    openssl: boolean;
  },
): void {
  const { key, sig: s, openssl, ...rest } = v;
  const { id, class: cls, comment, noble_strict, record_verifier } = rest;
  constructed.push({
    id,
    class: cls,
    source: SOURCE,
    comment,
    public_key: hex(key),
    message: hex(M),
    signature: hex(s),
    node_crypto: nodeCrypto(openssl, key, s),
    noble_strict,
    record_verifier,
  });
}

/** S = 0 and R = -[k]A for a key A of small order: finds such an R among the torsion points (k depends on R). */
function smallKeyForgery(key: Uint8Array, keyPoint: InstanceType<typeof Point>): Uint8Array | null {
  // k is used reduced mod L, and -[k]A negated as a point: reducing -k mod L would change it mod 8.
  for (const r of torsion) if (r.equals(mul(keyPoint, challenge(r.toBytes(), key)).negate())) return sig(r.toBytes(), 0n);
  return null;
}

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
