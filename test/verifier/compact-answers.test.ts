/**
 * Compact answers of a synthetic map (20,000 entries of varied verdicts, as a build of that size
 * writes them): one size for every bucket, compressed alike within 2% by gzip and brotli (as a proxy
 * or CDN would compress them), never over 32 KiB; and the verifier takes each, and refuses one whose
 * padding, entries, bucket or size was changed, each with its code.
 */
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { bucketBitsFor, bucketOf, verifyCompactAnswer } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import {
  buildStatement,
  COMPACT_ANSWER_LIMIT,
  canonicalJson,
  compactAnswerBytes,
  DomainMap,
  ENTRY_SIZE,
  encodeCompactAnswer,
  treeHasher,
} from '#shared';

const sha = (d: Uint8Array | string) => new Uint8Array(createHash('sha256').update(d).digest());
const COUNT = 20_000;

/** An entry as a build writes one: the domain's hash, its record's hash, and a verdict of the kinds records have. */
function entryOf(i: number): Uint8Array {
  const e = new Uint8Array(ENTRY_SIZE);
  const view = new DataView(e.buffer);
  e.set(sha(`shop-${i}.example`), 0);
  e.set(sha(`record of shop-${i}.example`), 32);
  e[64] = 1 + (i % 3);
  e[65] = i % 4;
  view.setFloat64(66, i % 7 === 0 ? -1 : (i * 37) % 101);
  view.setBigInt64(74, BigInt(Date.UTC(2027, i % 12, 1 + (i % 28))));
  return e;
}

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const keyId = 'compact-test';
const keySet = { keys: [{ kid: keyId, kty: 'OKP', crv: 'Ed25519', x: publicKey.export({ format: 'jwk' }).x, status: 'active' }] };

describe('compact answers', async () => {
  const entries = Array.from({ length: COUNT }, (_, i) => entryOf(i)).sort((a, b) => Buffer.compare(a.subarray(0, 32), b.subarray(0, 32)));
  const map = await DomainMap.fromLeaves(treeHasher(sha), Buffer.concat(entries), { leafSize: ENTRY_SIZE });
  const bits = bucketBitsFor(COUNT);
  const counts = new Array<number>(2 ** bits).fill(0);
  for (const e of entries) counts[bucketOf(e, bits)]!++;
  const bytes = compactAnswerBytes(COUNT, Math.max(...counts));
  const root = Buffer.from(map.head().root, 'base64');
  const answers = counts.map((_, bucket) => encodeCompactAnswer(sha, { bits, bucket, ...map.bucketRun(bits, bucket), root }, COUNT, bytes));
  const unsigned = buildStatement({
    issuer: 'merchant-verify.example',
    build: '20261201T000000Z-0000000000cc',
    issuedAt: '2026-12-01T00:00:00.000Z',
    map: map.head(),
    lookup: { prefix_length: 1, answer_bytes: 0, bits, bucket_bytes: bytes },
  });
  const signed = (s: object) => ({
    ...s,
    key_id: keyId,
    signature: `ed25519:${sign(null, Buffer.from(canonicalJson(s)), privateKey).toString('base64url')}`,
  });
  const statement = signed(unsigned);
  /** A domain of each bucket: one audited (its entry is at hand) and one never audited. */
  const audited = (bucket: number) =>
    Array.from({ length: COUNT }, (_, i) => i).find((i) => bucketOf(sha(`shop-${i}.example`), bits) === bucket)!;
  const verify = (domain: string, answer: Uint8Array, s: unknown = statement) =>
    verifyCompactAnswer({ domain, answer, statement: s, keySet });

  it('holds 128 to 256 audited domains a bucket on average, every answer one size and within 32 KiB', () => {
    expect(COUNT / 2 ** bits).toBeGreaterThanOrEqual(128);
    expect(COUNT / 2 ** bits).toBeLessThanOrEqual(256);
    expect(new Set(answers.map((a) => a.length))).toEqual(new Set([bytes]));
    expect(bytes).toBeLessThanOrEqual(COMPACT_ANSWER_LIMIT);
  });

  it('compresses every answer to one size within 2%, as a proxy would', () => {
    // Brotli at the quality a proxy compresses with on the fly (its default, 11, is for files compressed once).
    const brotli = (a: Uint8Array) => brotliCompressSync(a, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
    for (const compress of [gzipSync, brotli]) {
      const sizes = answers.map((a) => compress(a).length);
      const spread = (Math.max(...sizes) - Math.min(...sizes)) / Math.min(...sizes);
      expect(spread).toBeLessThanOrEqual(0.02);
    }
  });

  it("verifies each bucket's audited domain from its entry, and proves a never-audited one absent", () => {
    for (const bucket of [0, 1, counts.length - 1]) {
      const i = audited(bucket);
      const v = verify(`shop-${i}.example`, answers[bucket]!);
      expect(v.code).toBe(null);
      expect(v.entry?.record_hash).toBe(Buffer.from(sha(`record of shop-${i}.example`)).toString('base64'));
      expect(v.entry?.status).toBe(['verified', 'provisional', 'flagged'][i % 3]);
    }
    const never = 'never-audited.example';
    expect(verify(never, answers[bucketOf(sha(never), bits)]!).code).toBe('NEVER_AUDITED');
  });

  it('refuses changed padding, entries, bucket or size, and a statement asking for more bits than its size gives', () => {
    const bucket = 3;
    const domain = `shop-${audited(bucket)}.example`;
    const flipped = (at: number) => {
      const a = answers[bucket]!.slice();
      a[at]! ^= 1;
      return a;
    };
    expect(verify(domain, flipped(bytes - 1)).code).toBe('PADDING_MISMATCH');
    expect(verify(domain, flipped(bytes - 40)).code).toBe('PADDING_MISMATCH');
    expect(verify(domain, answers[bucket]!.subarray(0, bytes - 1)).code).toBe('PADDING_MISMATCH');
    // An entry's verdict byte changed: the run no longer hashes to the signed root.
    expect(verify(domain, flipped(48 + 82 * 2 + 64)).code).toBe('INCOMPLETE_PREFIX_ANSWER');
    expect(verify(domain, answers[bucket + 1]!).code).toBe('PREFIX_MISMATCH');
    const longer = signed({ ...unsigned, lookup: { ...unsigned.lookup, bits: bits + 1 } });
    expect(verify(domain, answers[bucket]!, longer).code).toBe('PREFIX_TOO_LONG');
  });
});
