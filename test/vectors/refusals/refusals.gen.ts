/**
 * Writes refusals.json, reproducibly: what a verifier must refuse, each case beside the genuine one
 * it was forged from, and the options that are misuse.
 *
 *   npx tsx test/vectors/refusals/refusals.gen.ts
 *
 * Keys come from fixed seeds and signatures are made by node:crypto; the tree, its proofs and the
 * domain map by the package's own log code, as the other generators do. test/verifier/refusal-vectors.test.ts
 * runs every check through the package.
 */
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { buildStatement, DomainMap, formatTlogProof, inclusionProof, statementText, treeHasher } from '#shared';
import { refusalChecks } from './checks.ts';

const sha = (d: Uint8Array | string) => new Uint8Array(createHash('sha256').update(d).digest());
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const h = treeHasher(sha);
const PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const privateKey = (label: string) =>
  createPrivateKey({ key: Buffer.concat([PKCS8, sha(`merchant-verify refusal vectors ${label}`)]), format: 'der', type: 'pkcs8' });
const publicOf = (priv: ReturnType<typeof privateKey>) =>
  new Uint8Array(Buffer.from(createPublicKey(priv).export({ format: 'jwk' }).x!, 'base64url'));

/** A note key (0x01, a log) or a cosignature key (0x04, a witness). */
function noteKey(label: string, name: string, type: number) {
  const priv = privateKey(label);
  const pub = publicOf(priv);
  const id = sha(Buffer.concat([Buffer.from(`${name}\n`), Buffer.of(type), pub])).slice(0, 4);
  return { name, priv, id, vkey: `${name}+${Buffer.from(id).toString('hex')}+${b64(Uint8Array.of(type, ...pub))}` };
}
type NoteKey = ReturnType<typeof noteKey>;
const line = (k: NoteKey, sig: Uint8Array) => `\u2014 ${k.name} ${b64(Uint8Array.of(...k.id, ...sig))}\n`;
const signNote = (k: NoteKey, text: string) => `${text}\n${line(k, sign(null, Buffer.from(text), k.priv))}`;
function cosignature(k: NoteKey, text: string, time: number) {
  const blob = Buffer.alloc(8);
  blob.writeBigUInt64BE(BigInt(time));
  return line(k, Uint8Array.of(...blob, ...sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${text}`), k.priv)));
}

// The record key: a key set of one Ed25519 key, its kid the RFC 7638 thumbprint.
const recordKey = privateKey('record key');
const x = b64url(publicOf(recordKey));
const kid = b64url(sha(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`));
const keySet = { keys: [{ kty: 'OKP', crv: 'Ed25519', x, kid, use: 'sig', alg: 'EdDSA' }] };
const signRecord = <T extends object>(value: T) => ({
  ...value,
  key_id: kid,
  signature: `ed25519:${b64url(sign(null, Buffer.from(canonicalize(value)!), recordKey))}`,
});

// A build of three domains; the statement of the build that is in the log, and of a fork that is not.
const map = await DomainMap.fromLeaves(
  h,
  Buffer.concat(['a-shop.example', 'b-shop.example', 'c-shop.example'].map(sha).sort(Buffer.compare)),
);
const ISSUER = 'merchant-verify.example';
const statementOf = (build: string) =>
  signRecord(buildStatement({ issuer: ISSUER, build, issuedAt: '2026-11-20T12:00:00.000Z', map: map.head(), leafSize: 32 }));
const genuine = statementOf('20261120T120000Z-000000000000');
// Last month's build: logged (entry 1), then superseded by the genuine build's statement (entry 4).
const OLDER_BUILD = '20261020T120000Z-0a0a0a0a0a0a';
const older = statementOf(OLDER_BUILD);
const fork = statementOf('20261120T120000Z-f0f0f0f0f0f0');
const DOMAIN = 'never-audited.example';
const absenceOf = (statement: object) => ({
  domain: DOMAIN,
  domain_hash: b64(sha(DOMAIN)),
  statement,
  ...map.neighbours(sha(DOMAIN)),
});

// The log: an entry, last month's build statement, another entry, a record (salted), the genuine build's statement.
const record = signRecord({ domain: 'b-shop.example', issuer: ISSUER, status: 'verified', tier: 'gold', score: 91 });
const salt = sha('merchant-verify refusal vectors salt');
const statementEntryOf = (statement: Parameters<typeof statementText>[0]) =>
  sha(Buffer.concat([Buffer.from('merchant-verify build statement v1\n'), Buffer.from(statementText(statement))]));
const entries = [
  sha('other entry 0'),
  statementEntryOf(older),
  sha('other entry 2'),
  sha(Buffer.concat([salt, Buffer.from(canonicalize(record)!)])),
  statementEntryOf(genuine),
];
const mth = async (s: number, e: number): Promise<Uint8Array> => {
  if (e - s === 1) return h.leaf(entries[s]!);
  let k = 1;
  while (k * 2 < e - s) k *= 2;
  return h.node(await mth(s, s + k), await mth(s + k, e));
};
const pathOf = (i: number) => inclusionProof(mth, i, entries.length);

// The live checkpoint, signed by the log and cosigned by two of the policy's three witnesses.
const ORIGIN = `${ISSUER}/log`;
const log = noteKey('log', ORIGIN, 0x01);
const otherLog = noteKey('other log', 'other.example/log', 0x01);
const [w1, w2, w3] = ['w1', 'w2', 'w3'].map((n) => noteKey(n, `${n}.example/witness`, 0x04)) as [NoteKey, NoteKey, NoteKey];
const T = 1_795_000_000; // the clock of the checks, seconds
const text = `${ORIGIN}\n${entries.length}\n${b64(await mth(0, entries.length))}\n`;
const cosigned = signNote(log, text) + cosignature(w1, text, T - 3600) + cosignature(w2, text, T - 1800);
// The same tree under another origin, signed by another log, cosigned by the same witnesses.
const otherText = text.replace(ORIGIN, otherLog.name);
const otherCosigned = signNote(otherLog, otherText) + cosignature(w1, otherText, T - 3600) + cosignature(w2, otherText, T - 1800);
// 101 signature lines: the log's, the two cosignatures, and 98 copies of w1's.
const padded = (copies: number) => cosigned + cosignature(w1, text, T - 3600).repeat(copies);

const statementProof = async (checkpoint: string, index = 4, path?: Uint8Array[]) =>
  formatTlogProof({ extra: null, index, proof: path ?? (await pathOf(index)), checkpoint });
const recordProof = async (checkpoint: string, index = 3, path?: Uint8Array[]) =>
  formatTlogProof({ extra: salt, index, proof: path ?? (await pathOf(index)), checkpoint });
const flipped = (path: Uint8Array[]) => path.map((p, i) => (i === 0 ? Uint8Array.of(p[0]! ^ 1, ...p.subarray(1)) : p));

const witnesses = `witness a ${w1.vkey}\nwitness b ${w2.vkey}\nwitness c ${w3.vkey}\n`;
const vectors = {
  about:
    'What a verifier must refuse (see packages/verifier/README.md). Each check names a call of the package, its inputs by name, and the verdict (`valid`, `code`) or the misuse error it throws (`throws`, a code). `now` is ms; options written {"$": "NaN"}, {"$": "Infinity"}, {"$": "invalid Date"} or {"$": "Date", "iso": ...} stand for values JSON cannot hold. The genuine checkpoint is signed by the log and cosigned by w1 (an hour before now) and w2 (half an hour); the log holds two other entries (0 and 2), the statement of the build before (the older build, index 1), the record at index 3 and the genuine build statement at index 4. The forked build is signed by the same record key but was never logged. The rolled-back proof is of the older build, against the genuine checkpoint: its statement is not the last entry (BUILD_SUPERSEDED), unless the caller asked about that build (asOfBuild).',
  now: T * 1000,
  key_set: keySet,
  log_vkey: log.vkey,
  domain: DOMAIN,
  record,
  policies: {
    'two of three': `log ${log.vkey}\n${witnesses}group two 2 a b c\nquorum two\n`,
    'no log line': `${witnesses}group two 2 a b c\nquorum two\n`,
    'a name in two groups': `log ${log.vkey}\n${witnesses}group A any a b\ngroup B 2 A a\nquorum B\n`,
  },
  checkpoints: {
    genuine: cosigned,
    'another origin': otherCosigned,
    '100 signature lines': padded(97),
    '101 signature lines': padded(98),
  },
  record_proofs: {
    genuine: await recordProof(cosigned),
    'the genuine checkpoint, the index of another entry': await recordProof(cosigned, 2),
    'the genuine checkpoint, a path with one bit flipped': await recordProof(cosigned, 3, flipped(await pathOf(3))),
    'a checkpoint of another origin': await recordProof(otherCosigned),
    'a checkpoint of 101 signature lines': await recordProof(padded(98)),
  },
  absence_proofs: {
    genuine: { ...absenceOf(genuine), statement_proof: await statementProof(cosigned) },
    'a forked build, the genuine checkpoint with the logged statement index and path': {
      ...absenceOf(fork),
      statement_proof: await statementProof(cosigned),
    },
    'a forked build, the genuine checkpoint with another index and its path': {
      ...absenceOf(fork),
      statement_proof: await statementProof(cosigned, 0),
    },
    'the genuine build, a path with one bit flipped': {
      ...absenceOf(genuine),
      statement_proof: await statementProof(cosigned, 4, flipped(await pathOf(4))),
    },
    'the genuine build, a checkpoint of another origin': { ...absenceOf(genuine), statement_proof: await statementProof(otherCosigned) },
    'the genuine build, no statement_proof': absenceOf(genuine),
    'a rolled-back build, logged before the live one, against the genuine checkpoint': {
      ...absenceOf(older),
      statement_proof: await statementProof(cosigned, 1),
    },
  },
  older_build: OLDER_BUILD,
  checks: refusalChecks(T * 1000, ORIGIN, log.vkey, OLDER_BUILD),
};

writeFileSync(join(import.meta.dirname, 'refusals.json'), `${JSON.stringify(vectors, null, 2)}\n`);
