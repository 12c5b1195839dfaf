import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type KeySet, parseKeySet, verifyAbsence } from '@merchant-verify/verifier';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AbsenceProof,
  buildStatement,
  canonicalBytes,
  createAbsenceVerifier,
  DomainMap,
  domainHash,
  ENTRY_SIZE,
  encodeBase64,
  encodeMapEntry,
  treeHasher,
} from '#shared';
import { nodeEd25519Verify } from '../../core/crypto/ed25519.ts';
import { generatePrivateJwk, loadSigningKey, signRecord, toPublicJwk } from '../../core/crypto/signing.ts';
import { absenceProofSchema } from '../../core/schemas/absence.ts';

const vectors = JSON.parse(readFileSync(new URL('../vectors/absence.json', import.meta.url), 'utf8')) as {
  key_set: KeySet;
  domains: string[];
  leaves: string[];
  statement: AbsenceProof['statement'];
  absence_proofs: AbsenceProof[];
  empty_map: { size: number; root: string };
};
const sha256 = (d: Uint8Array) => new Uint8Array(hash('sha256', d, 'buffer'));
const h = treeHasher(sha256);
/** The gateway's verifier (node:crypto) beside the portable one (@noble/ed25519, strict). */
const verifyNode = createAbsenceVerifier(sha256, nodeEd25519Verify);
const both = (proof: unknown, domain: string, keySet: KeySet) => {
  const node = verifyNode(proof, domain, keySet);
  expect(verifyAbsence(proof, domain, keySet)).toEqual(node);
  return node;
};
const leavesOf = (domains: string[]) => Buffer.concat(domains.map((d) => Buffer.from(domainHash(sha256, d))).sort(Buffer.compare));
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
/** v2 leaves: each domain's entry for a record of it (its bytes its canonical JSON), sorted by domain hash. */
const entriesOf = (domains: string[]) =>
  Buffer.concat(
    domains
      .map((domain) => {
        const record = { domain, status: 'verified', tier: 'silver', score: 61, next_audit_at: '2026-12-01T00:00:00.000Z' };
        return Buffer.from(encodeMapEntry(sha256, record, canonicalBytes(record)) as Uint8Array);
      })
      .sort((a, b) => Buffer.compare(a.subarray(0, 32), b.subarray(0, 32))),
  );

describe('the absence vectors (test/vectors/absence.json)', () => {
  it("the map of the seven domains is the vectors' leaves, size and root", async () => {
    const leaves = leavesOf(vectors.domains);
    expect(Array.from({ length: 7 }, (_, i) => encodeBase64(leaves.subarray(i * 32, i * 32 + 32)))).toEqual(vectors.leaves);
    const map = await DomainMap.fromLeaves(h, leaves);
    expect(map.head()).toEqual(vectors.statement.domain_map);
    expect((await DomainMap.fromLeaves(h, new Uint8Array(0))).head()).toEqual({ size: 0, root: vectors.empty_map.root });
  });

  it('each proof is what the map gives for its domain, and verifies with both Ed25519 primitives', async () => {
    const map = await DomainMap.fromLeaves(h, leavesOf(vectors.domains));
    for (const proof of vectors.absence_proofs) {
      const hashOf = domainHash(sha256, proof.domain);
      expect(encodeBase64(hashOf)).toBe(proof.domain_hash);
      expect(map.neighbours(hashOf)).toEqual({ left: proof.left, right: proof.right });
      expect(both(proof, proof.domain, vectors.key_set)).toMatchObject({
        valid: true,
        build: vectors.statement.build,
        issuedAt: vectors.statement.issued_at,
        size: 7,
      });
    }
    for (const domain of vectors.domains) expect(() => map.neighbours(domainHash(sha256, domain))).toThrow(/in the map/);
  });

  it('refuses every tampering with its code', () => {
    const [between, first, last] = vectors.absence_proofs as [AbsenceProof, AbsenceProof, AbsenceProof];
    const code = (proof: unknown, domain = between.domain, keySet = vectors.key_set) => {
      const r = both(proof, domain, keySet);
      return r.valid ? 'VALID' : r.code;
    };
    expect(code(between, first.domain)).toBe('MALFORMED_ABSENCE_PROOF');
    expect(code(between, vectors.domains[2])).toBe('MALFORMED_ABSENCE_PROOF');
    expect(code({ ...between, domain_hash: first.domain_hash })).toBe('MALFORMED_ABSENCE_PROOF');
    expect(code({ ...between, left: { ...between.left, path: 'x' } })).toBe('MALFORMED_ABSENCE_PROOF');
    expect(code(null)).toBe('MALFORMED_ABSENCE_PROOF');
    // The statement: another key set, a changed member, no signature at all.
    const other = parseKeySet({ keys: [toPublicJwk(generatePrivateJwk().x)] });
    expect(code(between, between.domain, other)).toBe('STATEMENT_NOT_SIGNED');
    expect(code({ ...between, statement: { ...between.statement, records: 8 } })).toBe('STATEMENT_NOT_SIGNED');
    const { key_id: _k, signature: _s, ...unsigned } = between.statement;
    expect(code({ ...between, statement: unsigned })).toBe('STATEMENT_NOT_SIGNED');
    // The neighbours: one dropped, swapped, not adjacent, a path hash flipped, a leaf that is not the domain's side.
    expect(code({ ...between, left: null })).toBe('NOT_ABSENT');
    expect(code({ ...between, right: null })).toBe('NOT_ABSENT');
    expect(code({ ...between, left: between.right, right: between.left })).toBe('NOT_ABSENT');
    expect(code({ ...between, left: { ...between.left!, index: 1 } })).toBe('NOT_ABSENT');
    const flipped = clone(between);
    flipped.right!.path[1] = encodeBase64(new Uint8Array(32).fill(7));
    expect(code(flipped)).toBe('NOT_ABSENT');
    expect(code({ ...first, right: { ...first.right!, index: 1 } }, first.domain)).toBe('NOT_ABSENT');
    expect(code({ ...last, left: { ...last.left!, index: 5 } }, last.domain)).toBe('NOT_ABSENT');
    expect(code({ ...last, left: null }, last.domain)).toBe('NOT_ABSENT');
  });
});

describe('domain maps of any size (property)', () => {
  const key = loadSigningKey(generatePrivateJwk());
  const keySet = parseKeySet({ keys: [key.publicJwk] });

  it('proves every absent domain absent, and no present one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.stringMatching(/^[a-z]{1,8}\.example$/), { maxLength: 300 }),
        fc.array(fc.stringMatching(/^[a-z]{1,8}\.test$/), { minLength: 1, maxLength: 5 }),
        async (domains, absent) => {
          // A v2 map, as builds make them: the neighbours are entries, ordered by their domain hash.
          const map = await DomainMap.fromLeaves(h, entriesOf(domains), { leafSize: ENTRY_SIZE });
          const statement = signRecord(
            buildStatement({ issuer: 'merchant-verify.example', build: 'b1', issuedAt: '2026-11-01T00:00:00.000Z', map: map.head() }),
            key,
          );
          for (const domain of absent) {
            const hashOf = domainHash(sha256, domain);
            const proof = { domain, domain_hash: encodeBase64(hashOf), statement, ...map.neighbours(hashOf) };
            expect(absenceProofSchema.safeParse(proof).success).toBe(true);
            expect(both(proof, domain, keySet)).toMatchObject({ valid: true, size: domains.length });
          }
          for (const domain of domains.slice(0, 5)) expect(map.has(domainHash(sha256, domain))).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('refuses leaves out of order, duplicated, or not whole', async () => {
    const leaves = leavesOf(['a.example', 'b.example', 'c.example']);
    const swapped = Buffer.concat([leaves.subarray(32, 64), leaves.subarray(0, 32), leaves.subarray(64)]);
    await expect(DomainMap.fromLeaves(h, swapped)).rejects.toThrow(/ascending order at leaf 1/);
    await expect(DomainMap.fromLeaves(h, Buffer.concat([leaves, leaves.subarray(64)]))).rejects.toThrow(/ascending/);
    await expect(DomainMap.fromLeaves(h, leaves.subarray(0, 40))).rejects.toThrow(/whole number/);
  });
});
