/**
 * Writes compact.json, reproducibly: a small v2 build (48 domains, a bucket of one bit holds about
 * 24), its signed statement with `lookup.bits` and `lookup.bucket_bytes`, both compact answers as
 * the build writes them, and the forgeries a verifier must refuse, each with its code: padding
 * changed, the answer cut short, an entry's verdict changed, the other bucket's answer, a statement
 * asking for more bits than its size gives, and one whose signature does not hold.
 *
 *   npx tsx test/vectors/compact/compact.gen.ts
 *
 * Keys come from fixed seeds and signatures are made by node:crypto; the entries, the map, the runs,
 * proofs and padding by the package's own code, as the build makes them.
 * test/verifier/compact-vectors.test.ts runs every case through the package.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import {
  bucketBitsFor,
  bucketOf,
  buildStatement,
  compactAnswerBytes,
  DomainMap,
  ENTRY_SIZE,
  encodeCompactAnswer,
  encodeMapEntry,
  treeHasher,
} from '#shared';
import { recordSigner } from '../seeded-keys.ts';

const sha = (d: Uint8Array | string) => new Uint8Array(createHash('sha256').update(d).digest());
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const { keySet, signRecord } = recordSigner('merchant-verify compact vectors record key');

const ISSUER = 'merchant-verify.example';
const domains = Array.from({ length: 48 }, (_, i) => `shop-${i}.example`);
const records = new Map(
  domains.map((domain, i) => [
    domain,
    signRecord({
      domain,
      issuer: ISSUER,
      issued_at: '2026-12-01T00:00:00.000Z',
      status: ['verified', 'provisional', 'flagged'][i % 3],
      tier: [null, 'bronze', 'silver', 'gold'][i % 4],
      score: i % 5 === 0 ? null : 40 + i,
      next_audit_at: '2027-01-01T00:00:00.000Z',
    }),
  ]),
);
const entries = domains
  .map((d) => encodeMapEntry(sha, records.get(d), Buffer.from(canonicalize(records.get(d))!)) as Uint8Array)
  .sort((a, b) => Buffer.compare(a.subarray(0, 32), b.subarray(0, 32)));
const map = await DomainMap.fromLeaves(treeHasher(sha), Buffer.concat(entries), { leafSize: ENTRY_SIZE });
const bits = bucketBitsFor(map.size);
const counts = new Array<number>(2 ** bits).fill(0);
for (const e of entries) counts[bucketOf(e, bits)]!++;
const bytes = compactAnswerBytes(map.size, Math.max(...counts));
const head = { issuer: ISSUER, build: '20261201T000000Z-0000000000cc', issuedAt: '2026-12-01T00:00:00.000Z', map: map.head() };
const unsigned = buildStatement({ ...head, lookup: { prefix_length: 1, answer_bytes: 0, bits, bucket_bytes: bytes } });
const statements = {
  genuine: signRecord(unsigned),
  longer: signRecord({ ...unsigned, lookup: { ...unsigned.lookup!, bits: bits + 1 } }),
  unsigned: { ...signRecord(unsigned), issued_at: '2026-12-02T00:00:00.000Z' },
};
const root = Buffer.from(map.head().root, 'base64');
const answers = counts.map((_, bucket) =>
  encodeCompactAnswer(sha, { bits, bucket, ...map.bucketRun(bits, bucket), root }, map.size, bytes),
);

const PRESENT = domains[0]!;
const ABSENT = 'never-audited-compact.example';
const mine = bucketOf(sha(PRESENT), bits);
const changed = (at: number) => {
  const a = answers[mine]!.slice();
  a[at]! ^= 1;
  return a;
};
const cases = [
  { name: 'an audited domain, from its entry', domain: PRESENT, statement: 'genuine', answer: answers[mine]!, code: null },
  {
    name: 'a domain never audited, proven absent',
    domain: ABSENT,
    statement: 'genuine',
    answer: answers[bucketOf(sha(ABSENT), bits)]!,
    code: 'NEVER_AUDITED',
  },
  { name: 'its last padding byte changed', domain: PRESENT, statement: 'genuine', answer: changed(bytes - 1), code: 'PADDING_MISMATCH' },
  {
    name: 'cut one byte short',
    domain: PRESENT,
    statement: 'genuine',
    answer: answers[mine]!.subarray(0, bytes - 1),
    code: 'PADDING_MISMATCH',
  },
  {
    name: "an entry's status changed",
    domain: PRESENT,
    statement: 'genuine',
    answer: changed(48 + 82 + 64),
    code: 'INCOMPLETE_PREFIX_ANSWER',
  },
  { name: "the other bucket's answer", domain: PRESENT, statement: 'genuine', answer: answers[1 - mine]!, code: 'PREFIX_MISMATCH' },
  {
    name: 'a statement asking for one bit more than its size gives',
    domain: PRESENT,
    statement: 'longer',
    answer: answers[mine]!,
    code: 'PREFIX_TOO_LONG',
  },
  {
    name: 'a statement changed after signing',
    domain: PRESENT,
    statement: 'unsigned',
    answer: answers[mine]!,
    code: 'STATEMENT_NOT_SIGNED',
  },
];

const out = {
  key_set: keySet,
  now: Date.parse('2026-12-02T00:00:00Z'),
  record: records.get(PRESENT),
  statements,
  cases: cases.map((c) => ({ ...c, answer: b64(c.answer) })),
};
writeFileSync(join(import.meta.dirname, 'compact.json'), `${JSON.stringify(out, null, 1)}\n`);
