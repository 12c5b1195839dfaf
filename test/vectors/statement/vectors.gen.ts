/**
 * Writes the build statement vectors (its log entry, and absence proofs carrying a statement_proof
 * that holds or is refused), reproducibly:
 *
 *   npx tsx test/vectors/statement/vectors.gen.ts
 *
 * The statement and its absence proof are those of test/vectors/absence.json. Everything else is
 * made here apart from the code under test: the canonical text (sorted members), the entry, the
 * RFC 6962 tree and paths, and the log key's signed checkpoints (node:crypto, a fixed seed).
 * test/verifier/statement-vectors.test.ts checks the file.
 */
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DIR = import.meta.dirname;
const sha = (...parts: (Uint8Array | string)[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** RFC 8785 for what a statement holds (ASCII strings, integers, objects): members sorted, no spaces. */
const canonical = (v: unknown): string =>
  typeof v === 'object' && v !== null
    ? `{${Object.keys(v)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
        .join(',')}}`
    : JSON.stringify(v);

// RFC 6962: leaf SHA-256(0x00 || entry), node SHA-256(0x01 || left || right), split at the largest power of two below n.
const leaf = (entry: Uint8Array) => sha(Uint8Array.of(0), entry);
const split = (n: number) => 2 ** Math.ceil(Math.log2(n) - 1);
const root = (leaves: Uint8Array[]): Uint8Array =>
  leaves.length === 1
    ? leaves[0]!
    : sha(Uint8Array.of(1), root(leaves.slice(0, split(leaves.length))), root(leaves.slice(split(leaves.length))));
const path = (m: number, leaves: Uint8Array[]): Uint8Array[] => {
  if (leaves.length === 1) return [];
  const k = split(leaves.length);
  return m < k ? [...path(m, leaves.slice(0, k)), root(leaves.slice(k))] : [...path(m - k, leaves.slice(k)), root(leaves.slice(0, k))];
};

const PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
function logKey(label: string, name: string) {
  const priv = createPrivateKey({
    key: Buffer.concat([PKCS8, sha(`merchant-verify statement vectors ${label}`)]),
    format: 'der',
    type: 'pkcs8',
  });
  const pub = new Uint8Array(Buffer.from(createPublicKey(priv).export({ format: 'jwk' }).x!, 'base64url'));
  const id = sha(`${name}\n`, Uint8Array.of(1), pub).slice(0, 4);
  const sign_ = (text: string) => `${text}\n\u2014 ${name} ${b64(Uint8Array.of(...id, ...sign(null, Buffer.from(text), priv)))}\n`;
  return { name, vkey: `${name}+${hex(id)}+${b64(Uint8Array.of(1, ...pub))}`, sign: sign_ };
}

const absence = JSON.parse(readFileSync(join(DIR, '../absence.json'), 'utf8')) as {
  key_set: unknown;
  statement: Record<string, unknown>;
  absence_proofs: Record<string, unknown>[];
};
const PREFIX = 'merchant-verify build statement v1\n';
const statementText = `${canonical(absence.statement)}\n`;
const entryOf = (bytes: string) => sha(PREFIX, bytes);
const entry = entryOf(statementText);
const log = logKey('log', 'merchant-verify.example/log');
const other = logKey('other', 'merchant-verify.example/log');

// Five record entries of earlier builds' kind, then this build's records and its statement last: a tree of 6.
const records = Array.from({ length: 5 }, (_, i) => sha(`record ${i}`));
function statementProof(o: { entries?: Uint8Array[]; index?: number; origin?: string; signer?: typeof log; extra?: string } = {}) {
  const leaves = (o.entries ?? [...records, entry]).map(leaf);
  const index = o.index ?? 5;
  const checkpoint = (o.signer ?? log).sign(`${o.origin ?? log.name}\n${leaves.length}\n${b64(root(leaves))}\n`);
  const lines = ['c2sp.org/tlog-proof@v1', ...(o.extra ? [`extra ${o.extra}`] : []), `index ${index}`, ...path(index, leaves).map(b64)];
  return `${lines.join('\n')}\n\n${checkpoint}`;
}
const proof = absence.absence_proofs[0]!;
const withProof = (statement_proof: string | undefined, changes: Record<string, unknown> = {}) => ({
  ...proof,
  ...changes,
  ...(statement_proof === undefined ? {} : { statement_proof }),
});
const refused = (name: string, code: string, reason: string | null, absenceProof: unknown) => ({
  name,
  code,
  reason,
  absence_proof: absenceProof,
});

const vectors = {
  about:
    "The build statement's log entry, SHA-256(prefix || the statement file's bytes), and absence proofs whose statement_proof (a C2SP tlog-proof without extra) proves it, checked with the log's verifier key: `valid` holds at `index` in a tree of `tree_size`; each of `refused` fails with `code`, its log proof failing with `reason` (null: there is none). The statement and the rest of each absence proof are test/vectors/absence.json's.",
  prefix: PREFIX,
  statement: absence.statement,
  statement_text: statementText,
  entry: hex(entry),
  leaf: hex(leaf(entry)),
  log_vkey: log.vkey,
  key_set: absence.key_set,
  domain: proof.domain,
  valid: { index: 5, tree_size: 6, absence_proof: withProof(statementProof()) },
  refused: [
    refused('no statement_proof', 'STATEMENT_NOT_LOGGED', null, withProof(undefined)),
    refused('not a tlog-proof', 'STATEMENT_NOT_LOGGED', 'MALFORMED_PROOF', withProof('index 5\n')),
    refused('an extra line', 'STATEMENT_NOT_LOGGED', 'MALFORMED_PROOF', withProof(statementProof({ extra: b64(sha('salt')) }))),
    refused(
      'a checkpoint signed by another key',
      'STATEMENT_NOT_LOGGED',
      'CHECKPOINT_NOT_SIGNED',
      withProof(statementProof({ signer: other })),
    ),
    refused(
      'a checkpoint of another origin',
      'STATEMENT_NOT_LOGGED',
      'LOG_ORIGIN_MISMATCH',
      withProof(statementProof({ origin: 'elsewhere.example/log' })),
    ),
    refused("a record's entry instead (index 4)", 'STATEMENT_NOT_LOGGED', 'NOT_INCLUDED', withProof(statementProof({ index: 4 }))),
    refused(
      'an entry without the prefix',
      'STATEMENT_NOT_LOGGED',
      'NOT_INCLUDED',
      withProof(statementProof({ entries: [...records, sha(statementText)] })),
    ),
    refused(
      'an entry of the statement without its newline',
      'STATEMENT_NOT_LOGGED',
      'NOT_INCLUDED',
      withProof(statementProof({ entries: [...records, entryOf(statementText.slice(0, -1))] })),
    ),
    refused(
      'a statement changed after signing (checked before the log)',
      'STATEMENT_NOT_SIGNED',
      null,
      withProof(statementProof(), { statement: { ...absence.statement, records: 8 } }),
    ),
  ],
};
writeFileSync(join(DIR, 'statement-proofs.json'), `${JSON.stringify(vectors, null, 2)}\n`);
