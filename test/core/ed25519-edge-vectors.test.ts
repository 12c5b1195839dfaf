/**
 * The Ed25519 edge-case vectors (test/vectors/ed25519-*.json, decision 0027) against both
 * primitives exactly as this project calls them, and against the Ed25519 step on each: the
 * service's (core/crypto/ed25519.ts, node:crypto) and the portable verifier's (@noble/ed25519) must
 * answer every vector alike, and as recorded. Each call site of the service's check meets the same
 * cases in test/core/ed25519-call-sites.test.ts.
 */

import { readFileSync } from 'node:fs';
import { parseKeySet } from '@merchant-verify/verifier';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalBytes,
  createEd25519Check,
  ED25519_L,
  encodeBase64url,
  nobleEd25519Verify,
  publicKeyProblem,
  signatureProblem,
} from '#shared';
import { checkEd25519, nodeEd25519Verify, verifyEd25519 } from '../../core/crypto/ed25519.ts';
import { edgeCases } from '../vectors/ed25519-cases.ts';
import { M, type Vector } from '../vectors/ed25519-construct.ts';

ed.hashes.sha512 = sha512;

const load = (name: string) =>
  JSON.parse(readFileSync(new URL(`../vectors/${name}`, import.meta.url), 'utf8')) as { record?: object; vectors: Vector[] };
const edge = load('ed25519-edge-cases.json');
const all = edge.vectors;
const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
/** node:crypto's verdicts differ by Node.js line (Node 24 and later refuse small-order points): the line running this test. */
const LINE = String(Math.min(26, Number(process.versions.node.split('.')[0]))) as keyof Vector['node_crypto'];

/** @noble/ed25519 as the portable verifier calls it: strict (RFC 8032), a throw being a refusal. */
function nobleStrict(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** What a record verifier answers for these bytes: the key set read as both sides read it, then the shared Ed25519 step. */
function recordVerdict(check: ReturnType<typeof createEd25519Check>, v: Vector): string {
  const publicKey = bytes(v.public_key);
  try {
    parseKeySet({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: encodeBase64url(publicKey), kid: 'k' }] });
  } catch (error) {
    return (error as { code: string }).code;
  }
  return check(bytes(v.signature), bytes(v.message), publicKey, 'k')?.code ?? 'valid';
}
const gatewayCheck = checkEd25519;
const clientCheck = createEd25519Check(nobleEd25519Verify);

describe('the vector files', () => {
  it('hold the constructed cases of every class where verifiers are known to differ, each with a source and verdicts', () => {
    expect(new Set(edge.vectors.map((v) => v.class))).toEqual(
      new Set([
        'valid',
        'non-canonical S',
        'small-order public key',
        'non-canonical public key',
        'small-order R',
        'non-canonical R',
        'mixed-order R',
        'mixed-order public key',
        'public key not on the curve',
        'R not on the curve',
      ]),
    );
    for (const v of all) {
      expect(v.source, v.id).not.toBe('');
      expect(Object.keys(v.node_crypto)).toEqual(['20', '22', '24', '26']);
      expect(typeof v.noble_strict).toBe('boolean');
      expect(['valid', 'INVALID_KEY_SET', 'MALFORMED_SIGNATURE', 'BAD_SIGNATURE']).toContain(v.record_verifier);
    }
    expect(new Set(all.map((v) => v.id)).size).toBe(all.length);
  });

  it("sign the constructed cases over the RFC 8785 bytes of the file's record", () => {
    const message = Buffer.from(canonicalBytes(edge.record)).toString('hex');
    for (const v of edge.vectors) expect(v.message, v.id).toBe(message);
  });

  it('are what the cases make over that record (the cases the call sites are checked with over their own messages)', () => {
    expect(edgeCases(M)).toEqual(edge.vectors);
  });
});

describe.each([['ed25519-edge-cases.json', edge.vectors]])('%s', (_file, vectors) => {
  it.each(vectors.map((v) => [v.id, v] as const))('%s: each primitive as recorded; both record verifiers as recorded', (_id, v) => {
    const [sig, msg, pk] = [bytes(v.signature), bytes(v.message), bytes(v.public_key)];
    expect(nodeEd25519Verify(sig, msg, pk, 'k'), `node:crypto on Node ${LINE}`).toBe(v.node_crypto[LINE]);
    expect(nobleStrict(sig, msg, pk), '@noble/ed25519 strict').toBe(v.noble_strict);
    // The portable primitive (noble strict plus OpenSSL's exact equation) refuses what either refuses;
    // Node 24's further refusal of small-order points is one of the shared encoding rules instead.
    expect(nobleEd25519Verify(sig, msg, pk, 'k'), 'portable primitive').toBe(v.node_crypto['20'] && v.noble_strict);
    expect(recordVerdict(gatewayCheck, v), 'gateway').toBe(v.record_verifier);
    // The service's check for notes and cosignatures: the same rules with no key set before them.
    expect(verifyEd25519(sig, msg, pk), 'service check').toBe(v.record_verifier === 'valid');
    expect(recordVerdict(clientCheck, v), 'client').toBe(v.record_verifier);
  });
});

describe('the shared encoding rules (packages/shared/src/ed25519-encoding.ts)', () => {
  // The eight points of small order from the definition: [L]P is in the torsion subgroup for any P.
  const P = ed.Point.fromBytes(bytes(edge.vectors.find((v) => v.id === 'honest')!.public_key));
  const torsionPoint = ed.Point.fromBytes(bytes('0300000000000000000000000000000000000000000000000000000000000000'));
  const t8 = torsionPoint.multiply(ED25519_L - 1n, false).add(torsionPoint);
  const smallOrder = Array.from({ length: 8 }, (_, i) => (i === 0 ? ed.Point.ZERO : t8.multiply(BigInt(i), false)));

  it('the torsion subgroup found from the definition has eight distinct points, of orders 1, 2, 4 and 8', () => {
    expect(new Set(smallOrder.map((p) => p.toHex())).size).toBe(8);
    for (const p of smallOrder) expect(p.multiply(8n, false).is0()).toBe(true);
    expect(smallOrder.filter((p) => !p.multiply(4n, false).is0())).toHaveLength(4);
  });

  it('refuses every small-order point as a key and as R, in every spelling (sign bit flipped, y + p where it fits)', () => {
    for (const p of smallOrder) {
      const enc = p.toBytes();
      const spellings = [enc, Uint8Array.from(enc, (b, i) => (i === 31 ? b ^ 0x80 : b))];
      for (const s of spellings) {
        expect(publicKeyProblem(s), p.toHex()).toMatch(/small order|canonical/);
        expect(signatureProblem(new Uint8Array([...s, ...new Uint8Array(32)])), p.toHex()).toMatch(/^R .*(small order|canonical)/);
      }
    }
    const p = (1n << 255n) - 19n;
    for (let y = p; y < 1n << 255n; y++) {
      const enc = Uint8Array.from(Buffer.from(y.toString(16).padStart(64, '0'), 'hex').reverse());
      expect(publicKeyProblem(enc)).toMatch(/not a canonical encoding/);
    }
  });

  it('accepts points of large order, including one with a torsion component, and S just below L', () => {
    expect(publicKeyProblem(P.toBytes())).toBeNull();
    expect(publicKeyProblem(P.add(t8).toBytes())).toBeNull();
    const sBelowL = Uint8Array.from(Buffer.from((ED25519_L - 1n).toString(16).padStart(64, '0'), 'hex').reverse());
    expect(signatureProblem(new Uint8Array([...P.toBytes(), ...sBelowL]))).toBeNull();
    sBelowL[0]! += 1;
    expect(signatureProblem(new Uint8Array([...P.toBytes(), ...sBelowL]))).toBe('S is not below the group order L');
  });

  it('a key set built without parseKeySet gets the same refusal from the record scheme: UNKNOWN_KEY from both sides', () => {
    for (const v of edge.vectors.filter((x) => x.record_verifier === 'INVALID_KEY_SET')) {
      const args = [bytes(v.signature), bytes(v.message), bytes(v.public_key), 'k'] as const;
      expect(gatewayCheck(...args)?.code, v.id).toBe('UNKNOWN_KEY');
      expect(clientCheck(...args)?.code, v.id).toBe('UNKNOWN_KEY');
    }
  });
});

describe('agreement beyond the vectors (property)', () => {
  // Every vector as is and near misses of it: one flipped bit of the key, R, S or the message, or S
  // moved by a multiple of L. Whatever the verdict, the gateway's and the client's checks give the same one.
  const near = edge.vectors;
  it("the gateway's and the client's Ed25519 checks give the same code for any near miss of a vector", () => {
    fc.assert(
      fc.property(fc.constantFrom(...near), fc.constantFrom('as-is', 'key', 'signature', 'message', 's-plus-l'), fc.nat(), (v, part, n) => {
        let [sig, msg, pk] = [bytes(v.signature), bytes(v.message), bytes(v.public_key)];
        const flip = (b: Uint8Array): Uint8Array => {
          if (b.length === 0) return Uint8Array.of(n & 0xff);
          const out = b.slice();
          out[(n >> 3) % out.length]! ^= 1 << (n & 7);
          return out;
        };
        if (part === 'key') pk = flip(pk);
        else if (part === 'signature') sig = flip(sig);
        else if (part === 'message') msg = flip(msg);
        else if (part === 's-plus-l') {
          const s = BigInt(`0x${Buffer.from(sig.subarray(32)).reverse().toString('hex')}`) + BigInt(1 + (n % 15)) * ED25519_L;
          if (s >= 1n << 256n) return;
          sig = new Uint8Array([...sig.subarray(0, 32), ...Buffer.from(s.toString(16).padStart(64, '0'), 'hex').reverse()]);
        }
        expect(gatewayCheck(sig, msg, pk, 'k')?.code ?? 'valid').toBe(clientCheck(sig, msg, pk, 'k')?.code ?? 'valid');
      }),
      { numRuns: 300 },
    );
  });
});
