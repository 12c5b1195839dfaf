/**
 * Writes witnessed-proofs.json, reproducibly: a record's tlog-proof and an absence proof's
 * `statement_proof` whose checkpoint carries cosignature lines, and the verdicts under policies.
 *
 *   npx tsx test/vectors/witness/witnessed-proofs.gen.ts
 *
 * Keys come from fixed seeds; signatures are made by node:crypto, apart from the code under test.
 * test/witness/witnessed-proofs.test.ts checks the file. The absence proof is one of
 * test/vectors/absence.json, with a statement proof added.
 */
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { formatTlogProof, inclusionProof, treeHasher } from '#shared';

const DIR = import.meta.dirname;
const sha = (d: Uint8Array | string) => new Uint8Array(createHash('sha256').update(d).digest());
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const h = treeHasher(sha);
const PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');

function key(label: string, name: string, type: number) {
  const seed = sha(`merchant-verify witnessed proof vectors ${label}`);
  const priv = createPrivateKey({ key: Buffer.concat([PKCS8, seed]), format: 'der', type: 'pkcs8' });
  const pub = new Uint8Array(Buffer.from(createPublicKey(priv).export({ format: 'jwk' }).x!, 'base64url'));
  const id = sha(Buffer.concat([Buffer.from(`${name}\n`), Buffer.of(type), pub])).slice(0, 4);
  return { name, priv, id, vkey: `${name}+${Buffer.from(id).toString('hex')}+${b64(Uint8Array.of(type, ...pub))}` };
}
type Key = ReturnType<typeof key>;
const line = (k: Key, sig: Uint8Array) => `\u2014 ${k.name} ${b64(Uint8Array.of(...k.id, ...sig))}\n`;
function cosig(k: Key, text: string, time: number) {
  const blob = Buffer.alloc(8);
  blob.writeBigUInt64BE(BigInt(time));
  return line(k, Uint8Array.of(...blob, ...sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${text}`), k.priv)));
}

const ORIGIN = 'merchant-verify.example/log';
const log = key('log', ORIGIN, 0x01);
const otherLog = key('other log', 'other.example/log', 0x01);
const [w1, w2, w3, x1, x2, x3] = ['w1', 'w2', 'w3', 'x1', 'x2', 'x3'].map((n) => key(n, `${n}.example/witness`, 0x04)) as Key[] as [
  Key,
  Key,
  Key,
  Key,
  Key,
  Key,
];
const policy = (l: Key, ws: Key[]) =>
  `log ${l.vkey}\n${ws.map((w, i) => `witness ${'abc'[i]} ${w.vkey}\n`).join('')}group two 2 a b c\nquorum two\n`;

// The log: three other entries, the record's entry (salted), the build statement's entry.
const absence = JSON.parse(readFileSync(join(DIR, '../absence.json'), 'utf8'));
const statementBytes = Buffer.from(`${canonicalize(absence.statement)}\n`);
const record = { domain: 'acme-outdoor.example', score: 91, status: 'verified', tier: 'gold' };
const salt = sha('merchant-verify witnessed proof vectors salt');
const leaves = [
  ...[0, 1, 2].map((i) => sha(`other entry ${i}`)),
  sha(Buffer.concat([salt, Buffer.from(canonicalize(record)!)])),
  sha(Buffer.concat([Buffer.from('merchant-verify build statement v1\n'), statementBytes])),
];
const mth = async (s: number, e: number): Promise<Uint8Array> => {
  if (e - s === 1) return h.leaf(leaves[s]!);
  let k = 1;
  while (k * 2 < e - s) k *= 2;
  return h.node(await mth(s, s + k), await mth(s + k, e));
};
const text = `${ORIGIN}\n${leaves.length}\n${b64(await mth(0, leaves.length))}\n`;
const T = 1_795_000_000; // the clock of the checks, seconds
const signed = `${text}\n${line(log, sign(null, Buffer.from(text), log.priv))}`;
const cosigned = signed + cosig(w1, text, T - 3600) + cosig(w2, text, T - 1800) + cosig(x3, text, T - 60);
const badLine = cosig(w3, text, T - 600).replace(/[A-Za-z0-9+/]{8}=*\n$/, (s) => `${s[0] === 'A' ? 'B' : 'A'}${s.slice(1)}`);
const recordProof = async (checkpoint: string) =>
  formatTlogProof({ extra: salt, index: 3, proof: await inclusionProof(mth, 3, 5), checkpoint });
const statementProof = formatTlogProof({ extra: null, index: 4, proof: await inclusionProof(mth, 4, 5), checkpoint: cosigned });

const ok = (cosigners: string[], at: number) => ({ valid: true, cosigners, witnessed_at: at * 1000 });
const vectors = {
  about:
    "Proofs whose checkpoint carries cosignature lines (c2sp.org/tlog-proof keeps the checkpoint note whole): a record's log proof (verifyLogProof with a policy) and an absence proof with its statement_proof (verifyAbsence with a policy), checked at `now` (ms) with an optional max_age_ms. The checkpoint is cosigned by w1 (an hour before now), w2 (half an hour) and x3 (a minute), a witness the policy does not name.",
  log_vkey: log.vkey,
  policies: {
    'two of three': policy(log, [w1, w2, w3]),
    'other witnesses': policy(log, [x1, x2, w3]),
    'another log': policy(otherLog, [w1, w2, w3]),
    'no log line': `witness a ${w1.vkey}\nquorum a\n`,
  },
  record,
  record_proofs: { cosigned: await recordProof(cosigned), 'bad cosignature by w3': await recordProof(cosigned + badLine) },
  absence: {
    key_set: absence.key_set,
    domain: absence.absence_proofs[0].domain,
    proof: { ...absence.absence_proofs[0], statement_proof: statementProof },
  },
  checks: [
    { name: 'record: two of three, fresh', proof: 'cosigned', policy: 'two of three', now: T * 1000, ...ok(['a', 'b'], T - 1800) },
    {
      name: 'record: a policy of one, no log line: the trusted log key',
      proof: 'cosigned',
      policy: 'no log line',
      now: T * 1000,
      ...ok(['a'], T - 3600),
    },
    {
      name: 'record: within a maximum age of two hours',
      proof: 'cosigned',
      policy: 'two of three',
      now: T * 1000,
      max_age_ms: 7_200_000,
      ...ok(['a', 'b'], T - 1800),
    },
    {
      name: "record: a maximum age of 45 minutes leaves only w2's",
      proof: 'cosigned',
      policy: 'two of three',
      now: T * 1000,
      max_age_ms: 2_700_000,
      valid: false,
      code: 'NOT_WITNESSED',
    },
    {
      name: 'record: a policy naming other witness keys',
      proof: 'cosigned',
      policy: 'other witnesses',
      now: T * 1000,
      valid: false,
      code: 'NOT_WITNESSED',
    },
    {
      name: 'record: a clock two hours early (cosignatures ahead of it)',
      proof: 'cosigned',
      policy: 'two of three',
      now: (T - 7200) * 1000,
      valid: false,
      code: 'NOT_WITNESSED',
    },
    {
      name: 'record: a policy of another log',
      proof: 'cosigned',
      policy: 'another log',
      now: T * 1000,
      valid: false,
      code: 'LOG_ORIGIN_MISMATCH',
    },
    {
      name: "record: a policy witness's cosignature that does not verify",
      proof: 'bad cosignature by w3',
      policy: 'two of three',
      now: T * 1000,
      valid: false,
      code: 'BAD_COSIGNATURE',
    },
    { name: 'absence: two of three, fresh', proof: 'absence', policy: 'two of three', now: T * 1000, ...ok(['a', 'b'], T - 1800) },
    {
      name: 'absence: a maximum age of 45 minutes',
      proof: 'absence',
      policy: 'two of three',
      now: T * 1000,
      max_age_ms: 2_700_000,
      valid: false,
      code: 'NOT_WITNESSED',
    },
    {
      name: 'absence: a policy naming other witness keys',
      proof: 'absence',
      policy: 'other witnesses',
      now: T * 1000,
      valid: false,
      code: 'NOT_WITNESSED',
    },
    {
      // A policy implies the log check: with no statement proof, the statement is not proven in the log.
      name: 'absence: no statement_proof',
      proof: 'absence without statement_proof',
      policy: 'two of three',
      now: T * 1000,
      valid: false,
      code: 'STATEMENT_NOT_LOGGED',
    },
  ],
};
writeFileSync(join(DIR, 'witnessed-proofs.json'), `${JSON.stringify(vectors, null, 2)}\n`);
