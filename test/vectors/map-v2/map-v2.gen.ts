/**
 * Writes map-v2.json, reproducibly: a small v2 build (its map's leaves the domains' 82-byte
 * entries), its signed statement, the absence proof and the record for an entry a verifier must
 * take, and the forgeries it must refuse, each with the code: for a domain's entry, its record of
 * the build before (the same domain, validly signed) and `{"junk":true}`; an absence proof whose
 * neighbour entry was altered.
 *
 *   npx tsx test/vectors/map-v2/map-v2.gen.ts
 *
 * Keys come from fixed seeds and signatures are made by node:crypto; the entries, the map, its
 * neighbours by the package's own code, as the build and the gateway make them.
 * test/verifier/map-v2-vectors.test.ts runs every case through the package.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { buildStatement, DomainMap, ENTRY_SIZE, encodeMapEntry, hexPrefix, lookupAnswerBytes, prefixLengthFor, treeHasher } from '#shared';
import { recordSigner } from '../seeded-keys.ts';

const sha = (d: Uint8Array | string) => new Uint8Array(createHash('sha256').update(d).digest());
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const { keySet, signRecord } = recordSigner('merchant-verify map v2 vectors record key');

// December's build of 48 domains, and November's record of each.
const ISSUER = 'merchant-verify.example';
const domains = Array.from({ length: 48 }, (_, i) => `shop-${i}.example`);
const recordOf = (domain: string, month: 'nov' | 'dec') =>
  signRecord({
    domain,
    issuer: ISSUER,
    issued_at: month === 'dec' ? '2026-12-01T00:00:00.000Z' : '2026-11-01T00:00:00.000Z',
    status: month === 'dec' && domain.endsWith('7.example') ? 'flagged' : 'verified',
    tier: 'silver',
    score: 70,
    next_audit_at: month === 'dec' ? '2027-01-01T00:00:00.000Z' : '2026-12-01T00:00:00.000Z',
  });
const records = new Map(domains.map((d) => [d, recordOf(d, 'dec')]));
const entryOf = (d: string) => {
  const record = records.get(d)!;
  return encodeMapEntry(sha, record, Buffer.from(canonicalize(record)!)) as Uint8Array;
};
const entries = domains.map(entryOf).sort((a, b) => Buffer.compare(a.subarray(0, 32), b.subarray(0, 32)));
const map = await DomainMap.fromLeaves(treeHasher(sha), Buffer.concat(entries), { leafSize: ENTRY_SIZE });
const prefixLength = prefixLengthFor(map.size);
const mine = (d: string) => hexPrefix(sha(d), prefixLength);
const byPrefix = new Map<string, string[]>();
for (const d of domains) byPrefix.set(mine(d), [...(byPrefix.get(mine(d)) ?? []), d]);
const maxRecords = Math.max(...[...byPrefix.values()].map((ds) => ds.length));
const maxRecordBytes = Math.max(...[...byPrefix.values()].map((ds) => ds.reduce((n, d) => n + JSON.stringify(records.get(d)).length, 0)));
const lookup = {
  prefix_length: prefixLength,
  answer_bytes: lookupAnswerBytes({ prefixLength, size: map.size, maxRecords, maxRecordBytes, leafSize: ENTRY_SIZE }),
};
const statement = signRecord(
  buildStatement({ issuer: ISSUER, build: '20261201T000000Z-0000000000bb', issuedAt: '2026-12-01T00:00:00.000Z', map: map.head(), lookup }),
);

// The domain asked: one with a record (its entry, as a compact answer proves it); and one never audited.
const PRESENT = domains[0]!;
const ABSENT = 'never-audited-v2.example';
const entry = { entry: b64(entryOf(PRESENT)) };
const absence = { domain: ABSENT, domain_hash: b64(sha(ABSENT)), statement, ...map.neighbours(sha(ABSENT)) };
/** The left neighbour's entry with one byte of its `status` changed: still in order, no longer the signed map's leaf. */
const altered = (() => {
  const entry = Buffer.from(absence.left!.leaf, 'base64');
  entry[64] = entry[64] === 1 ? 3 : 1;
  return { ...absence, left: { ...absence.left!, leaf: b64(entry) } };
})();

type Case = { name: string; kind: 'entry' | 'absence'; domain: string; input: unknown; code: string | null };
const cases: Case[] = [
  { name: "the entry's own record", kind: 'entry', domain: PRESENT, input: { ...entry, record: records.get(PRESENT) }, code: null },
  { name: 'genuine absence proof (entries as neighbours)', kind: 'absence', domain: ABSENT, input: absence, code: 'NEVER_AUDITED' },
  {
    name: "the domain's record of the build before (same domain, validly signed)",
    kind: 'entry',
    domain: PRESENT,
    input: { ...entry, record: recordOf(PRESENT, 'nov') },
    code: 'RECORD_NOT_IN_MAP',
  },
  {
    name: 'a record replaced by {"junk":true}',
    kind: 'entry',
    domain: PRESENT,
    input: { ...entry, record: { junk: true } },
    code: 'RECORD_NOT_IN_MAP',
  },
  {
    name: 'an absence proof whose neighbour entry was altered (its status)',
    kind: 'absence',
    domain: ABSENT,
    input: altered,
    code: 'NOT_ABSENT',
  },
];

const out = {
  key_set: keySet,
  now: Date.parse('2026-12-02T00:00:00Z'),
  entry_size: ENTRY_SIZE,
  domains,
  records: domains.map((d) => records.get(d)),
  leaves: entries.map(b64),
  statement,
  cases,
};
writeFileSync(join(import.meta.dirname, 'map-v2.json'), `${JSON.stringify(out, null, 1)}\n`);
