/**
 * The pieces the Ed25519 edge-case vectors are made of (./ed25519-vectors.gen.ts writes them):
 * field and group arithmetic over noble's points, the record whose canonical bytes the kept vectors
 * sign, the signing seed and nonces, the points of small order, and the vector a case becomes. Every
 * case is made over a message given (./ed25519-cases.ts), so the same cases can be signed over what
 * any call site verifies: a note's text, a cosigned checkpoint.
 */

import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { canonicalBytes, ED25519_L as L } from '#shared';

ed.hashes.sha512 = sha512;
export const { Point } = ed;
export const P = (1n << 255n) - 19n;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
export const le = (b: Uint8Array): bigint => BigInt(`0x${hex(b.slice().reverse()) || '0'}`);
export const le32 = (n: bigint): Uint8Array => Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse());
export const mul = (pt: InstanceType<typeof Point>, n: bigint) => pt.multiply(((n % L) + L) % L, false);

type Verdict = 'valid' | 'INVALID_KEY_SET' | 'UNKNOWN_KEY' | 'MALFORMED_SIGNATURE' | 'BAD_SIGNATURE';
export interface Vector {
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

export const RECORD = {
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
export const M = canonicalBytes(RECORD);
export const SEED = sha512(utf8('merchant-verify ed25519 edge cases: signing seed')).slice(0, 32);
export const { scalar: a, pointBytes: A } = ed.utils.getExtendedPublicKey(SEED);
export const nonce = (label: string): bigint => le(sha512(utf8(`merchant-verify ed25519 edge cases: ${label}`))) % L;
export const challenge = (R: Uint8Array, key: Uint8Array, message: Uint8Array): bigint =>
  le(sha512(ed.etc.concatBytes(R, key, message))) % L;
export const sig = (R: Uint8Array, S: bigint): Uint8Array => ed.etc.concatBytes(R, le32(S));

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
export function offCurveY(): bigint {
  for (let y = 2n; ; y++) {
    try {
      Point.fromBytes(le32(y));
    } catch {
      return y;
    }
  }
}
const T8 = orderEightPoint();
export const torsion = [0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n].map((i) => (i === 0n ? Point.ZERO : T8.multiply(i, false)));
export const ID = Point.ZERO.toBytes();

const SOURCE = 'constructed by test/vectors/ed25519-vectors.gen.ts over the canonical bytes of `record`';
/** A case as a vector over `message`, node:crypto's verdicts by line derived from OpenSSL's. */
export function vector(
  message: Uint8Array,
  v: Omit<Vector, 'source' | 'message' | 'public_key' | 'signature' | 'node_crypto'> & {
    key: Uint8Array;
    sig: Uint8Array;
    openssl: boolean;
  },
): Vector {
  const { key, sig: s, openssl, ...rest } = v;
  const { id, class: cls, comment, noble_strict, record_verifier } = rest;
  return {
    id,
    class: cls,
    source: SOURCE,
    comment,
    public_key: hex(key),
    message: hex(message),
    signature: hex(s),
    node_crypto: nodeCrypto(openssl, key, s),
    noble_strict,
    record_verifier,
  };
}

/** S = 0 and R = -[k]A for a key A of small order: finds such an R among the torsion points (k depends on R). */
export function smallKeyForgery(key: Uint8Array, keyPoint: InstanceType<typeof Point>, message: Uint8Array): Uint8Array | null {
  // k is used reduced mod L, and -[k]A negated as a point: reducing -k mod L would change it mod 8.
  for (const r of torsion) if (r.equals(mul(keyPoint, challenge(r.toBytes(), key, message)).negate())) return sig(r.toBytes(), 0n);
  return null;
}
