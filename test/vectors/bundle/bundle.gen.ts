/**
 * Writes bundle.json, reproducibly: offline bundles (`GET /v1/bundle`) a verifier must take and
 * those it must refuse, each forgery made from a genuine bundle by a gateway or a shop that swaps the
 * record, moves its place in the map, breaks the statement's signature, or gives the statement's log
 * proof of another checkpoint.
 *
 *   npx tsx test/vectors/bundle/bundle.gen.ts
 *
 * Keys come from fixed seeds and signatures are made by node:crypto; the map, its paths and the
 * log's paths by the package's own code, as the gateway makes them. test/verifier/bundle-vectors.test.ts
 * runs every check through the package.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import {
  buildStatement,
  DomainMap,
  domainHash,
  ENTRY_SIZE,
  encodeBase64,
  encodeMapEntry,
  statementEntry,
  statementText,
  treeHasher,
} from '#shared';
import { recordSigner } from '../seeded-keys.ts';
import { signedLog } from '../signed-log.ts';

const sha = (d: Uint8Array | string) => new Uint8Array(createHash('sha256').update(d).digest());
// The record key: records and the statement are signed by the record scheme.
const { keySet, signRecord: signed } = recordSigner('merchant-verify bundle vectors record key');

// A build of seven domains, its map and its signed statement.
const ISSUER = 'merchant-verify.example';
const NOW = Date.parse('2026-11-21T00:00:00.000Z');
const h = treeHasher(sha);
const domains = [
  'acme-outdoor.example',
  'gadget-hub.example',
  'shop-a.example',
  'shop-b.example',
  'shop-c.example',
  'tea.example',
  'zed.example',
];
const recordOf = (domain: string) =>
  signed({
    domain,
    issuer: ISSUER,
    status: 'verified',
    tier: 'silver',
    score: 70,
    last_audited_at: '2026-11-10T00:00:00.000Z',
    next_audit_at: '2026-12-10T00:00:00.000Z',
  });
// Map leaf v2: each domain's 82-byte entry (its hash, its record's hash, status, tier, score, next audit), sorted by domain hash.
const entryOf = (domain: string) => {
  const record = recordOf(domain);
  const entry = encodeMapEntry(sha, record, Buffer.from(canonicalize(record)!));
  if (typeof entry === 'string') throw new Error(`no map entry for ${domain}: ${entry}`);
  return Buffer.from(entry);
};
const map = await DomainMap.fromLeaves(h, Buffer.concat(domains.map(entryOf).sort(Buffer.compare)), { leafSize: ENTRY_SIZE });
const statement = signed(
  buildStatement({ issuer: ISSUER, build: '20261120T120000Z-0000000000bb', issuedAt: '2026-11-20T12:00:00.000Z', map: map.head() }),
);
// Another build's statement, as genuine, over the same map.
const otherStatement = signed(
  buildStatement({ issuer: ISSUER, build: '20261020T120000Z-0000000000aa', issuedAt: '2026-10-20T12:00:00.000Z', map: map.head() }),
);

// The log: five entries of earlier builds, then this build's statement; and a tree one entry larger, made after it.
const { vkey: logVkey, proof: logProof } = signedLog('merchant-verify bundle vectors log key', `${ISSUER}/log`);
const entries = [...Array.from({ length: 5 }, (_, i) => sha(`entry ${i}`)), statementEntry(sha, Buffer.from(statementText(statement)))];
const statementProof = await logProof(entries, 5);
const laterProof = await logProof(entries, 5, [...entries, sha('entry 6')]);
// The statement proven, truly, in a tree where a later build's entry follows it: a store rolled back to this build.
const supersededProof = await logProof([...entries, sha('entry 6')], 5);

// The same domain's record of the build before: genuine, signed by the same key, but not the one this build's map commits to.
const olderGold = signed({
  domain: 'acme-outdoor.example',
  issuer: ISSUER,
  status: 'verified',
  tier: 'gold',
  score: 88,
  last_audited_at: '2026-10-10T00:00:00.000Z',
  next_audit_at: '2026-11-10T00:00:00.000Z',
});
const schema = `https://${ISSUER}/schemas/bundle/v1`;
const placeOf = (domain: string) => {
  const { index } = map.search(domainHash(sha, domain));
  return { index, leaf: encodeBase64(map.leaf(index)), path: map.inclusionPath(index).map(encodeBase64) };
};
const GOLD = 'acme-outdoor.example';
const NEVER = 'never-audited.example';
const gold = {
  schema,
  domain: GOLD,
  record: recordOf(GOLD),
  place: placeOf(GOLD),
  absence: null,
  statement,
  statement_proof: statementProof,
};
const absence = {
  domain: NEVER,
  domain_hash: encodeBase64(domainHash(sha, NEVER)),
  statement,
  ...map.neighbours(domainHash(sha, NEVER)),
  statement_proof: statementProof,
};
const never = {
  schema,
  domain: NEVER,
  record: { domain: NEVER, issuer: ISSUER, status: 'unverified', tier: null, score: null, last_audited_at: null, next_audit_at: null },
  place: null,
  absence,
  statement,
  statement_proof: statementProof,
};

type Bundle = Record<string, any>;
const forged = (from: Bundle, change: (b: Bundle) => void): Bundle => {
  const b = structuredClone(from);
  change(b);
  return b;
};
const c = (name: string, domain: string, bundle: Bundle, code: string | null) => ({ name, domain, bundle, code });

const vectors = {
  about:
    'Offline bundles (GET /v1/bundle) verified with verifyBundle against key_set and the log key log_vkey, as of now (epoch ms): code null is a verified record, NEVER_AUDITED a proven absence, anything else the code the forgery is refused with.',
  key_set: keySet,
  log_vkey: logVkey,
  now: NOW,
  cases: [
    c('a record, its place and its statement, logged', GOLD, gold, null),
    c('a never-audited answer with its absence proof', NEVER, never, 'NEVER_AUDITED'),
    c(
      "another domain's record (validly signed) in the bundle",
      GOLD,
      forged(gold, (b) => (b.record = recordOf('tea.example'))),
      'DOMAIN_MISMATCH',
    ),
    c("another domain's whole bundle", 'tea.example', gold, 'DOMAIN_MISMATCH'),
    c(
      "the same domain's record of the build before (validly signed, same key), in this build's place",
      GOLD,
      forged(gold, (b) => (b.record = olderGold)),
      'RECORD_NOT_IN_MAP',
    ),
    c(
      'the record changed after signing',
      GOLD,
      forged(gold, (b) => (b.record.score = 99)),
      'BAD_SIGNATURE',
    ),
    c(
      'the place at another index',
      GOLD,
      forged(gold, (b) => (b.place.index += 1)),
      'RECORD_NOT_IN_MAP',
    ),
    c(
      "the place of another domain's leaf",
      GOLD,
      forged(gold, (b) => (b.place = placeOf('tea.example'))),
      'RECORD_NOT_IN_MAP',
    ),
    c(
      'a path cut short',
      GOLD,
      forged(gold, (b) => b.place.path.pop()),
      'RECORD_NOT_IN_MAP',
    ),
    c(
      'no place for a record',
      GOLD,
      forged(gold, (b) => (b.place = null)),
      'MALFORMED_BUNDLE',
    ),
    c(
      'an absence proof beside a record',
      GOLD,
      forged(gold, (b) => (b.absence = absence)),
      'MALFORMED_BUNDLE',
    ),
    c(
      'not a bundle (the schema of a record)',
      GOLD,
      forged(gold, (b) => (b.schema = `https://${ISSUER}/schemas/verification/v1`)),
      'MALFORMED_BUNDLE',
    ),
    c(
      "the statement's signature broken",
      GOLD,
      forged(gold, (b) => (b.statement.records += 1)),
      'STATEMENT_NOT_SIGNED',
    ),
    c(
      'the statement proof against another checkpoint',
      GOLD,
      forged(gold, (b) => (b.statement_proof = laterProof)),
      'STATEMENT_NOT_LOGGED',
    ),
    c(
      'a superseded build: its statement proven in a checkpoint that logs a later entry after it (a store rolled back)',
      GOLD,
      forged(gold, (b) => (b.statement_proof = supersededProof)),
      'BUILD_SUPERSEDED',
    ),
    c(
      'no statement proof',
      GOLD,
      forged(gold, (b) => (b.statement_proof = null)),
      'STATEMENT_NOT_LOGGED',
    ),
    c(
      'a never-audited answer whose absence proof is of another statement',
      NEVER,
      forged(never, (b) => (b.absence = { ...b.absence, statement: otherStatement })),
      'MALFORMED_BUNDLE',
    ),
    c(
      'a never-audited answer whose neighbours are not adjacent',
      NEVER,
      forged(never, (b) => (b.absence.right = placeOf('zed.example'))),
      'NOT_ABSENT',
    ),
    c(
      'a never-audited answer for a domain with a record',
      GOLD,
      forged(never, (b) => {
        b.domain = GOLD;
        b.record.domain = GOLD;
      }),
      'MALFORMED_ABSENCE_PROOF',
    ),
  ],
};
writeFileSync(join(import.meta.dirname, 'bundle.json'), `${JSON.stringify(vectors, null, 2)}\n`);
