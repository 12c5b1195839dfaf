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
import { buildStatement, DomainMap, statementText } from '@merchant-verify/verifier/internal/issuer';
import { formatTlogProof, inclusionProof, treeHasher } from '@merchant-verify/verifier/internal/tlog';
import canonicalize from 'canonicalize';

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
  signRecord(buildStatement({ issuer: ISSUER, build, issuedAt: '2026-11-20T12:00:00.000Z', map: map.head() }));
const genuine = statementOf('20261120T120000Z-000000000000');
const fork = statementOf('20261120T120000Z-f0f0f0f0f0f0');
const DOMAIN = 'never-audited.example';
const absenceOf = (statement: object) => ({
  domain: DOMAIN,
  domain_hash: b64(sha(DOMAIN)),
  statement,
  ...map.neighbours(sha(DOMAIN)),
});

// The log: three other entries, a record (salted), the genuine build's statement.
const record = signRecord({ domain: 'b-shop.example', issuer: ISSUER, status: 'verified', tier: 'gold', score: 91 });
const salt = sha('merchant-verify refusal vectors salt');
const entries = [
  ...[0, 1, 2].map((i) => sha(`other entry ${i}`)),
  sha(Buffer.concat([salt, Buffer.from(canonicalize(record)!)])),
  sha(Buffer.concat([Buffer.from('merchant-verify build statement v1\n'), Buffer.from(statementText(genuine))])),
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
    'What a verifier must refuse (see packages/verifier/README.md). Each check names a call of the package, its inputs by name, and the verdict (`valid`, `code`) or the misuse error it throws (`throws`, a code). `now` is ms; options written {"$": "NaN"}, {"$": "Infinity"}, {"$": "invalid Date"} or {"$": "Date", "iso": ...} stand for values JSON cannot hold. The genuine checkpoint is signed by the log and cosigned by w1 (an hour before now) and w2 (half an hour); the log holds three other entries, the record at index 3 and the genuine build statement at index 4. The forked build is signed by the same record key but was never logged.',
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
  },
  checks: [] as Record<string, unknown>[],
};

const NOW = T * 1000;
const checks = vectors.checks;
const policy = 'two of three';
// Controls: the genuine proofs hold, with the log key, with the policy's log line alone, or both.
for (const log of [true, false]) {
  checks.push({
    name: `record: genuine${log ? ', with the log key' : ', the policy alone'}`,
    call: 'verifyLogProof',
    proof: 'genuine',
    policy,
    log,
    valid: true,
  });
  checks.push({
    name: `absence: genuine${log ? ', with the log key' : ', the policy alone'}`,
    call: 'verifyAbsence',
    proof: 'genuine',
    policy,
    log,
    valid: true,
  });
}
checks.push({
  name: 'checkpoint: 100 signature lines are allowed',
  call: 'verifyWitnessedCheckpoint',
  checkpoint: '100 signature lines',
  policy,
  valid: true,
});
// The forged cases: refused with a log key, and with a policy alone (a policy implies the log check).
for (const log of [true, false]) {
  const how = log ? 'with the log key' : 'the policy alone';
  for (const [proof, code] of [
    ['the genuine checkpoint, the index of another entry', 'NOT_INCLUDED'],
    ['the genuine checkpoint, a path with one bit flipped', 'NOT_INCLUDED'],
    ['a checkpoint of another origin', log ? 'CHECKPOINT_NOT_SIGNED' : 'LOG_ORIGIN_MISMATCH'],
    ['a checkpoint of 101 signature lines', 'CHECKPOINT_NOT_SIGNED'],
  ])
    checks.push({ name: `record: ${proof}, ${how}`, call: 'verifyLogProof', proof, policy, log, valid: false, code });
  for (const proof of [
    'a forked build, the genuine checkpoint with the logged statement index and path',
    'a forked build, the genuine checkpoint with another index and its path',
    'the genuine build, a path with one bit flipped',
    'the genuine build, a checkpoint of another origin',
    'the genuine build, no statement_proof',
  ])
    checks.push({
      name: `absence: ${proof}, ${how}`,
      call: 'verifyAbsence',
      proof,
      policy,
      log,
      valid: false,
      code: 'STATEMENT_NOT_LOGGED',
    });
}
checks.push(
  {
    name: 'record: a policy without a log line, no log key',
    call: 'verifyLogProof',
    proof: 'genuine',
    policy: 'no log line',
    log: false,
    valid: false,
    code: 'LOG_KEY_MISSING',
  },
  { name: 'record: no log key, no policy', call: 'verifyLogProof', proof: 'genuine', log: false, valid: false, code: 'LOG_KEY_MISSING' },
  {
    name: 'absence: a policy without a log line, no log key',
    call: 'verifyAbsence',
    proof: 'genuine',
    policy: 'no log line',
    log: false,
    valid: false,
    code: 'LOG_KEY_MISSING',
  },
  {
    name: 'absence: verifyAnswer, a policy without a log line, no log key',
    call: 'verifyAnswer',
    proof: 'genuine',
    policy: 'no log line',
    log: false,
    valid: false,
    code: 'LOG_KEY_MISSING',
  },
  {
    name: 'absence: verifyAnswer, a forked build, the policy alone',
    call: 'verifyAnswer',
    proof: 'a forked build, the genuine checkpoint with the logged statement index and path',
    policy,
    log: false,
    valid: false,
    code: 'STATEMENT_NOT_LOGGED',
  },
  {
    name: 'checkpoint: 101 signature lines',
    call: 'verifyWitnessedCheckpoint',
    checkpoint: '101 signature lines',
    policy,
    valid: false,
    code: 'CHECKPOINT_NOT_SIGNED',
  },
  { name: 'policy: a name in two groups', call: 'parsePolicy', policy: 'a name in two groups', throws: 'INVALID_POLICY', line: 6 },
);
// Misuse: thrown, coded, never a pass. Each against the genuine record proof and policy, with cosignatures a month old where an age matters.
const MONTH = 30 * 86_400_000;
const misuse = (name: string, options: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  checks.push({
    name: `misuse: ${name}`,
    call: 'verifyLogProof',
    proof: 'genuine',
    policy,
    log: true,
    options,
    throws: 'INVALID_ARGUMENT',
    ...extra,
  });
misuse('maxAgeMs NaN, a month after the cosignatures', { maxAgeMs: { $: 'NaN' }, now: NOW + MONTH });
misuse("maxAgeMs '36h'", { maxAgeMs: '36h', now: NOW + MONTH });
misuse('maxAgeMs -1', { maxAgeMs: -1 });
misuse('maxAgeMs 0', { maxAgeMs: 0 });
misuse('maxAgeMs Infinity', { maxAgeMs: { $: 'Infinity' } });
misuse('now an invalid Date', { now: { $: 'invalid Date' } });
misuse('now NaN', { now: { $: 'NaN' } });
misuse('now a date string', { now: '2026-11-28T00:00:00Z' });
misuse('maxAgeMs without a policy', { maxAgeMs: 3_600_000 }, { policy: null });
misuse('a policy as text, not parsed', { policy: 'quorum none\n' });
misuse('absence: log without vkey', {}, { call: 'verifyAbsence', log: { origin: ORIGIN } });
misuse('answer: log without vkey', {}, { call: 'verifyAnswer', log: { proof: 'genuine' } });
misuse('answer: log with a proof that is not text', {}, { call: 'verifyAnswer', log: { vkey: log.vkey, proof: 5 } });
checks.push({
  name: 'misuse: now a valid Date is a time (accepted)',
  call: 'verifyLogProof',
  proof: 'genuine',
  policy,
  log: true,
  options: { now: { $: 'Date', iso: new Date(NOW).toISOString() } },
  valid: true,
});

writeFileSync(join(import.meta.dirname, 'refusals.json'), `${JSON.stringify(vectors, null, 2)}\n`);
