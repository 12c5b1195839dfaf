/**
 * Writes prefix.json, reproducibly: prefix answers (`GET /v1/lookup/{prefix}`) a verifier must take
 * and those it must refuse, each forgery made from the genuine answer by a gateway that drops, adds
 * or alters a record or a leaf, lies about the prefix or its length, or pads to another size. A
 * forgery that changes the answer's size is padded again to the signed size, so that the check it
 * is about is the one that refuses it.
 *
 *   npx tsx test/vectors/prefix/prefix.gen.ts
 *
 * Keys come from fixed seeds and signatures are made by node:crypto; the map, its runs and range
 * proofs by the package's own code, as the gateway makes them. test/verifier/prefix-vectors.test.ts
 * runs every check through the package.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildStatement, DomainMap, hexPrefix, lookupAnswerBytes, type PaddedPart, paddedPart, prefixLengthFor, treeHasher } from '#shared';
import { recordSigner } from '../seeded-keys.ts';

const sha = (d: Uint8Array | string) => new Uint8Array(createHash('sha256').update(d).digest());
const { keySet, signRecord } = recordSigner('merchant-verify prefix vectors record key');

// A build of 48 domains: a prefix of one hex digit holds about three.
const ISSUER = 'merchant-verify.example';
const domains = Array.from({ length: 48 }, (_, i) => `shop-${i}.example`);
const recordOf = (domain: string, score = 70) => signRecord({ domain, issuer: ISSUER, status: 'verified', tier: 'silver', score });
const records = new Map(domains.map((d) => [d, recordOf(d)]));
const map = await DomainMap.fromLeaves(treeHasher(sha), Buffer.concat(domains.map(sha).sort(Buffer.compare)));
const prefixLength = prefixLengthFor(map.size);
const byPrefix = new Map<string, string[]>();
for (const d of domains) byPrefix.set(hexPrefix(sha(d), prefixLength), [...(byPrefix.get(hexPrefix(sha(d), prefixLength)) ?? []), d]);
const maxRecords = Math.max(...[...byPrefix.values()].map((ds) => ds.length));
const maxRecordBytes = Math.max(...[...byPrefix.values()].map((ds) => ds.reduce((n, d) => n + JSON.stringify(records.get(d)).length, 0)));
const lookup = {
  prefix_length: prefixLength,
  answer_bytes: lookupAnswerBytes({ prefixLength, size: map.size, maxRecords, maxRecordBytes }),
};
const statementOf = (l: object | undefined) =>
  signRecord(
    buildStatement({
      issuer: ISSUER,
      build: '20261120T120000Z-0000000000aa',
      issuedAt: '2026-11-20T12:00:00.000Z',
      map: map.head(),
      leafSize: 32,
      ...(l ? { lookup: l as typeof lookup } : {}),
    }),
  );
const statement = statementOf(lookup);

type Answer = PaddedPart & { statement: unknown };
/** Pads an answer's part to the signed size (what a gateway that wants its forgery to pass would do). */
const padded = (a: Answer, bytes = lookup.answer_bytes): Answer => {
  const part = { ...a, padding: '' };
  return { ...part, padding: ' '.repeat(bytes - Buffer.byteLength(paddedPart(part))) };
};
/** The genuine answer for a prefix, as the gateway makes it. */
function answerFor(prefix: string): Answer {
  const run = map.prefixRun(prefix);
  const inRun = run.leaves.map((l) => Buffer.from(l, 'base64').toString('hex')).filter((h) => h.startsWith(prefix));
  const ordered = domains.filter((d) => inRun.includes(Buffer.from(sha(d)).toString('hex'))).sort((a, b) => Buffer.compare(sha(a), sha(b)));
  return padded({
    statement,
    prefix,
    first: run.first,
    leaves: run.leaves,
    records: ordered.map((d) => records.get(d)),
    proof: run.proof,
    padding: '',
  });
}

// The domain asked: one with a record, in a prefix with at least two; and one never audited.
const PRESENT = [...byPrefix.values()].find((ds) => ds.length >= 2)![0]!;
const ABSENT = 'never-audited-prefix.example';
const mine = (d: string) => hexPrefix(sha(d), prefixLength);
const genuine = answerFor(mine(PRESENT));
const genuineAbsent = answerFor(mine(ABSENT));
const at = genuine.records.findIndex((r) => (r as { domain: string }).domain === PRESENT);
const other = domains.find((d) => mine(d) !== mine(PRESENT))!;
const withRecords = (a: Answer, rs: unknown[]) => padded({ ...a, records: rs });
const run = genuine.leaves.findIndex((l) => Buffer.from(l, 'base64').toString('hex').startsWith(genuine.prefix));

const cases: { name: string; domain: string; answer: unknown; code: string | null }[] = [
  { name: 'genuine: the record', domain: PRESENT, answer: genuine, code: null },
  { name: 'genuine: the absence', domain: ABSENT, answer: genuineAbsent, code: 'NEVER_AUDITED' },
  {
    name: 'a record dropped, its leaf kept',
    domain: PRESENT,
    answer: withRecords(
      genuine,
      genuine.records.filter((_, i) => i !== at),
    ),
    code: 'INCOMPLETE_PREFIX_ANSWER',
  },
  {
    name: 'a record dropped with its leaf (the domain then looks never audited)',
    domain: PRESENT,
    answer: padded({
      ...genuine,
      leaves: genuine.leaves.filter((_, i) => i !== run + at),
      records: genuine.records.filter((_, i) => i !== at),
    }),
    code: 'INCOMPLETE_PREFIX_ANSWER',
  },
  {
    name: 'a record added, of a domain the run does not hold',
    domain: PRESENT,
    answer: withRecords(genuine, [...genuine.records, records.get(other)]),
    code: 'INCOMPLETE_PREFIX_ANSWER',
  },
  {
    name: 'a record added with a leaf the signed map does not hold',
    domain: ABSENT,
    answer: padded({
      ...genuineAbsent,
      leaves: [...genuineAbsent.leaves.slice(0, -1), Buffer.from(sha(ABSENT)).toString('base64'), genuineAbsent.leaves.at(-1)!].sort(
        (a, b) => Buffer.compare(Buffer.from(a, 'base64'), Buffer.from(b, 'base64')),
      ),
      records: [...genuineAbsent.records, recordOf(ABSENT)],
    }),
    code: 'INCOMPLETE_PREFIX_ANSWER',
  },
  {
    name: 'the record asked altered (its score)',
    domain: PRESENT,
    answer: withRecords(
      genuine,
      genuine.records.map((r, i) => (i === at ? { ...(r as object), score: 99 } : r)),
    ),
    code: 'BAD_SIGNATURE',
  },
  {
    name: 'the record asked swapped for another domain of the run',
    domain: PRESENT,
    answer: withRecords(
      genuine,
      genuine.records.map((r, i) => (i === at ? genuine.records[(at + 1) % genuine.records.length] : r)),
    ),
    code: 'INCOMPLETE_PREFIX_ANSWER',
  },
  {
    name: 'the range proof short of a hash',
    domain: PRESENT,
    answer: padded({ ...genuine, proof: genuine.proof.slice(1) }),
    code: 'INCOMPLETE_PREFIX_ANSWER',
  },
  {
    name: 'the left neighbour left out',
    domain: PRESENT,
    answer: padded({ ...genuine, first: genuine.first + 1, leaves: genuine.leaves.slice(1) }),
    code: 'INCOMPLETE_PREFIX_ANSWER',
  },
  {
    name: 'padded to more than the signed size',
    domain: PRESENT,
    answer: padded(genuine, lookup.answer_bytes + 1),
    code: 'PADDING_MISMATCH',
  },
  {
    name: 'padded to less than the signed size',
    domain: PRESENT,
    answer: padded(genuine, lookup.answer_bytes - 1),
    code: 'PADDING_MISMATCH',
  },
  { name: 'the answer of another prefix', domain: PRESENT, answer: answerFor(mine(other)), code: 'PREFIX_MISMATCH' },
  {
    name: 'a prefix one digit longer than the build signs',
    domain: PRESENT,
    answer: padded({ ...genuine, prefix: hexPrefix(sha(PRESENT), prefixLength + 1) }),
    code: 'PREFIX_MISMATCH',
  },
  {
    name: 'the statement given another size (and padded to it)',
    domain: PRESENT,
    answer: padded(
      { ...genuine, statement: { ...statement, lookup: { ...lookup, answer_bytes: lookup.answer_bytes + 100 } } },
      lookup.answer_bytes + 100,
    ),
    code: 'STATEMENT_NOT_SIGNED',
  },
  {
    name: 'a statement of a build made before prefix lookups',
    domain: PRESENT,
    answer: { ...genuine, statement: statementOf(undefined) },
    code: 'MALFORMED_PREFIX_ANSWER',
  },
  { name: 'not an object', domain: PRESENT, answer: [genuine], code: 'MALFORMED_PREFIX_ANSWER' },
];

const out = {
  key_set: keySet,
  now: Date.parse('2026-11-21T00:00:00Z'),
  prefix_length: prefixLength,
  answer_bytes: lookup.answer_bytes,
  cases,
};
writeFileSync(join(import.meta.dirname, 'prefix.json'), `${JSON.stringify(out, null, 1)}\n`);
