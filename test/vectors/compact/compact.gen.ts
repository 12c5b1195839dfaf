/**
 * Writes compact.json, reproducibly: a small v2 build (48 domains, a bucket of one bit holds about
 * 24), its signed statement with `lookup.bits` and `lookup.bucket_bytes`, both compact answers as
 * the build writes them, and the forgeries a verifier must refuse, each with its code: padding
 * changed, the answer cut short, an entry's verdict changed, the other bucket's answer, a statement
 * asking for more bits than its size gives, one whose signature does not hold, and, checked with the
 * log's key, a statement whose log proof shows a later entry after it (a store rolled back to this
 * build: BUILD_SUPERSEDED, for an entry and an absence alike) beside the same answers proven current.
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
  statementEntry,
  statementText,
  treeHasher,
} from '#shared';
import { recordSigner } from '../seeded-keys.ts';
import { signedLog } from '../signed-log.ts';

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
// The log: earlier entries, then the genuine statement's; proven there as the last entry (current), or in a tree
// where a later build's entry follows it (a store pointed back at this build after the next went live).
const log = signedLog('merchant-verify compact vectors log key', `${ISSUER}/log`);
const logged = [
  ...Array.from({ length: 3 }, (_, i) => sha(`entry ${i}`)),
  statementEntry(sha, Buffer.from(statementText(statements.genuine))),
];
const statementProofs = {
  current: await log.proof(logged, 3),
  superseded: await log.proof([...logged, sha('entry 4')], 3),
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
  {
    name: "with the log: the statement its checkpoint's last entry, an entry",
    domain: PRESENT,
    statement: 'genuine',
    statement_proof: 'current',
    answer: answers[mine]!,
    code: null,
  },
  {
    name: "with the log: the statement its checkpoint's last entry, an absence",
    domain: ABSENT,
    statement: 'genuine',
    statement_proof: 'current',
    answer: answers[bucketOf(sha(ABSENT), bits)]!,
    code: 'NEVER_AUDITED',
  },
  {
    name: 'with the log: a store rolled back, a later entry logged after the statement, an entry',
    domain: PRESENT,
    statement: 'genuine',
    statement_proof: 'superseded',
    answer: answers[mine]!,
    code: 'BUILD_SUPERSEDED',
  },
  {
    name: 'with the log: a store rolled back, a later entry logged after the statement, an absence',
    domain: ABSENT,
    statement: 'genuine',
    statement_proof: 'superseded',
    answer: answers[bucketOf(sha(ABSENT), bits)]!,
    code: 'BUILD_SUPERSEDED',
  },
];

const out = {
  key_set: keySet,
  now: Date.parse('2026-12-02T00:00:00Z'),
  record: records.get(PRESENT),
  statements,
  // A case naming a statement_proof is checked with the log's key (`log: { vkey: log_vkey }`).
  log_vkey: log.vkey,
  statement_proofs: statementProofs,
  cases: cases.map((c) => ({ ...c, answer: b64(c.answer) })),
};
writeFileSync(join(import.meta.dirname, 'compact.json'), `${JSON.stringify(out, null, 1)}\n`);
