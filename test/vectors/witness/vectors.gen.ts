/**
 * Writes the witness vectors (policies, cosignatures, add-checkpoint bodies), reproducibly:
 *
 *   npx tsx test/vectors/witness/vectors.gen.ts
 *
 * Keys come from fixed seeds; signatures are made by node:crypto (Ed25519 is deterministic), apart
 * from the code under test. test/witness/vectors.test.ts checks every file.
 */
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { consistencyProof, treeHasher } from '@merchant-verify/verifier/tlog';

const DIR = import.meta.dirname;
const sha = (d: Uint8Array | string) => new Uint8Array(createHash('sha256').update(d).digest());
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const h = treeHasher(sha);
const PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');

function key(label: string, name: string, type: number) {
  const seed = sha(`merchant-verify witness vectors ${label}`);
  const priv = createPrivateKey({ key: Buffer.concat([PKCS8, seed]), format: 'der', type: 'pkcs8' });
  const pub = new Uint8Array(Buffer.from(createPublicKey(priv).export({ format: 'jwk' }).x!, 'base64url'));
  const id = sha(Buffer.concat([Buffer.from(`${name}\n`), Buffer.of(type), pub])).slice(0, 4);
  const idHex = Buffer.from(id).toString('hex');
  return {
    name,
    seed,
    priv,
    pub,
    id,
    idHex,
    vkey: `${name}+${idHex}+${b64(Uint8Array.of(type, ...pub))}`,
    private: `PRIVATE+KEY+${name}+${idHex}+${b64(Uint8Array.of(type, ...seed))}`,
  };
}
type Key = ReturnType<typeof key>;
const line = (k: Key, sig: Uint8Array) => `\u2014 ${k.name} ${b64(Uint8Array.of(...k.id, ...sig))}\n`;
const note = (k: Key, text: string) => `${text}\n${line(k, sign(null, Buffer.from(text), k.priv))}`;
function cosig(k: Key, text: string, time: number) {
  const blob = Buffer.alloc(8);
  blob.writeBigUInt64BE(BigInt(time));
  return line(k, Uint8Array.of(...blob, ...sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${text}`), k.priv)));
}

const log = key('log', 'log.example/log', 0x01);
const w = ['w1', 'w2', 'w3', 'x1', 'x2', 'y1'].map((n) => key(n, `${n}.example/witness`, 0x04));
const [w1, w2, w3, x1, x2, y1] = w as [Key, Key, Key, Key, Key, Key];
const mldsaPub = new Uint8Array(1312).fill(7);
const mldsaId = Buffer.from(sha(Buffer.concat([Buffer.from('pq.example/witness\n'), Buffer.of(6), mldsaPub])).slice(0, 4)).toString('hex');
const mldsaVkey = `pq.example/witness+${mldsaId}+${b64(Uint8Array.of(6, ...mldsaPub))}`;

const policies = {
  about:
    'c2sp.org/tlog-policy files. valid: parsed, then `checks` give the witnesses (policy names) that cosigned and whether the quorum is met. invalid: refused with INVALID_POLICY at `line` (0: the file as a whole).',
  valid: [
    {
      name: 'one witness',
      text: `log ${log.vkey} https://log.example/\nwitness w1 ${w1.vkey} https://w1.example/\nquorum w1\n`,
      logs: 1,
      witnesses: ['w1'],
      checks: [
        { cosigned: [], met: false },
        { cosigned: ['w1'], met: true },
      ],
    },
    {
      name: 'two levels of groups, comments, tabs',
      text: `# the spec's example\n  log ${log.vkey}\n\nwitness X1 ${w1.vkey}\nwitness\tX2 ${w2.vkey}\nwitness X3 ${w3.vkey}\ngroup X-witnesses 2 X1 X2 X3\nwitness Y1 ${x1.vkey}\nwitness Y2 ${x2.vkey}\nwitness Y3 ${y1.vkey}\ngroup Y-witnesses any Y1 Y2 Y3\n\t# nested\ngroup X-and-Y all X-witnesses Y-witnesses\nquorum X-and-Y   \n`,
      logs: 1,
      witnesses: ['X1', 'X2', 'X3', 'Y1', 'Y2', 'Y3'],
      checks: [
        { cosigned: ['X1', 'X2'], met: false },
        { cosigned: ['X1', 'Y3'], met: false },
        { cosigned: ['X1', 'X3', 'Y2'], met: true },
        { cosigned: ['X1', 'X2', 'X3', 'Y1', 'Y2', 'Y3'], met: true },
      ],
    },
    {
      name: 'quorum none, no witness',
      text: `log ${log.vkey}\nquorum none\n`,
      logs: 1,
      witnesses: [],
      checks: [{ cosigned: [], met: true }],
    },
    {
      name: 'no log line, no final newline',
      text: `witness a ${w1.vkey}\nwitness b ${w2.vkey}\ngroup g 1 a b\nquorum g`,
      logs: 0,
      witnesses: ['a', 'b'],
      checks: [
        { cosigned: ['b'], met: true },
        { cosigned: [], met: false },
      ],
    },
  ],
  invalid: [
    { name: 'no quorum line', text: `log ${log.vkey}\nwitness w1 ${w1.vkey}\n`, line: 0 },
    { name: 'two quorum lines', text: `witness w1 ${w1.vkey}\nquorum w1\nquorum none\n`, line: 3 },
    { name: 'quorum names an unknown witness', text: `witness w1 ${w1.vkey}\nquorum w2\n`, line: 2 },
    { name: 'quorum before its witness (forward reference)', text: `quorum w1\nwitness w1 ${w1.vkey}\n`, line: 1 },
    { name: 'group refers forward', text: `witness a ${w1.vkey}\ngroup g any a b\nwitness b ${w2.vkey}\nquorum g\n`, line: 2 },
    { name: 'duplicate witness name', text: `witness a ${w1.vkey}\nwitness a ${w2.vkey}\nquorum a\n`, line: 2 },
    { name: 'group and witness share a name', text: `witness a ${w1.vkey}\ngroup a any a\nquorum a\n`, line: 2 },
    { name: 'duplicate witness key under another name', text: `witness a ${w1.vkey}\nwitness b ${w1.vkey}\nquorum a\n`, line: 2 },
    { name: 'duplicate log key', text: `log ${log.vkey}\nlog ${log.vkey} https://mirror.example/\nquorum none\n`, line: 2 },
    { name: 'group threshold 0', text: `witness a ${w1.vkey}\ngroup g 0 a\nquorum g\n`, line: 2 },
    { name: 'group threshold above its members', text: `witness a ${w1.vkey}\nwitness b ${w2.vkey}\ngroup g 3 a b\nquorum g\n`, line: 3 },
    { name: 'group threshold not a number', text: `witness a ${w1.vkey}\ngroup g two a\nquorum g\n`, line: 2 },
    { name: 'group with no member', text: `witness a ${w1.vkey}\ngroup g any\nquorum a\n`, line: 2 },
    { name: 'member listed twice', text: `witness a ${w1.vkey}\nwitness b ${w2.vkey}\ngroup g 2 a b a\nquorum g\n`, line: 3 },
    { name: 'none as a member', text: `witness a ${w1.vkey}\ngroup g any a none\nquorum g\n`, line: 2 },
    { name: 'none as a witness name', text: `witness none ${w1.vkey}\nquorum none\n`, line: 1 },
    { name: 'unknown keyword', text: `witness a ${w1.vkey}\nwitnesses b ${w2.vkey}\nquorum a\n`, line: 2 },
    { name: 'carriage return (CRLF file)', text: `witness a ${w1.vkey}\r\nquorum a\r\n`, line: 1 },
    { name: 'log key of the cosignature type', text: `log ${w1.vkey}\nquorum none\n`, line: 1 },
    { name: 'witness key of the note type 0x01', text: `witness a ${log.vkey}\nquorum a\n`, line: 1 },
    { name: 'witness key of type ML-DSA-44 (0x06), not verified here', text: `witness pq ${mldsaVkey}\nquorum pq\n`, line: 1 },
    { name: 'key ID that does not match', text: `witness a ${w1.vkey.replace(`+${w1.idHex}+`, '+00000000+')}\nquorum a\n`, line: 1 },
    { name: 'witness URL not http(s)', text: `witness a ${w1.vkey} ftp://w1.example/\nquorum a\n`, line: 1 },
    { name: 'quorum line with two names', text: `witness a ${w1.vkey}\nwitness b ${w2.vkey}\nquorum a b\n`, line: 3 },
  ],
};

const leaves = Array.from({ length: 13 }, (_, i) => sha(`entry ${i}`));
const mth = (s: number, e: number): Uint8Array =>
  e - s === 1
    ? h.leaf(leaves[s]!)
    : (() => {
        let k = 1;
        while (k * 2 < e - s) k *= 2;
        return h.node(mth(s, s + k), mth(s + k, e));
      })();
const checkpointText = (size: number) => `log.example/log\n${size}\n${b64(size === 0 ? h.empty() : mth(0, size))}\n`;
const T = 1_790_000_000;
const text13 = checkpointText(13);
const signed13 = note(log, text13);

const cosignatures = {
  about:
    'c2sp.org/tlog-cosignature Ed25519 (cosignature/v1): witness keys (private key as `mvr keygen --witness` writes it, vkey, key ID), cosignature lines over a checkpoint, and a cosigned checkpoint checked under a policy at a given clock.',
  // c2sp.org/tlog-cosignature's own example: its cosignature line's key ID and timestamp (its message says time 1679315147).
  spec_example: {
    note: 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n\u2014 example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n\u2014 witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n',
    witness: 'witness.example.com/w1',
    key_id: '8d66cf3f',
    time: 1679315147,
  },
  log: { private: log.private, vkey: log.vkey },
  witnesses: w
    .slice(0, 3)
    .map((k) => ({ private: k.private, vkey: k.vkey, key_id: k.idHex, public_key: Buffer.from(k.pub).toString('hex') })),
  lines: [w1, w2, w3].map((k, i) => ({
    vkey: k.vkey,
    checkpoint: text13,
    time: T + i,
    message: `cosignature/v1\ntime ${T + i}\n${text13}`,
    line: cosig(k, text13, T + i),
  })),
  checked: (() => {
    const policy = `log ${log.vkey}\nwitness w1 ${w1.vkey}\nwitness w2 ${w2.vkey}\nwitness w3 ${w3.vkey}\ngroup q 2 w1 w2 w3\nquorum q\n`;
    const cosigned = `${signed13}${cosig(w1, text13, T)}${cosig(w2, text13, T + 100)}\u2014 unknown.example/witness ${b64(new Uint8Array(76).fill(1))}\n`;
    const tampered =
      signed13 +
      cosig(w1, text13, T) +
      cosig(w2, text13, T + 100).replace(/.(=*\n)$/, (m, tail: string) => (m[0] === 'A' ? 'B' : 'A') + tail);
    return [
      {
        name: 'two of three, checked a minute later',
        policy,
        checkpoint: cosigned,
        now: (T + 160) * 1000,
        valid: true,
        cosigners: ['w1', 'w2'],
        witnessed_at: (T + 100) * 1000,
      },
      {
        name: 'the maximum age excludes one cosignature',
        policy,
        checkpoint: cosigned,
        now: (T + 160) * 1000,
        max_age_ms: 100_000,
        valid: false,
        code: 'NOT_WITNESSED',
      },
      {
        name: 'a cosignature more than a minute ahead does not count',
        policy,
        checkpoint: cosigned,
        now: (T + 39) * 1000,
        valid: false,
        code: 'NOT_WITNESSED',
      },
      {
        name: 'exactly a minute ahead counts',
        policy,
        checkpoint: cosigned,
        now: (T + 40) * 1000,
        valid: true,
        cosigners: ['w1', 'w2'],
        witnessed_at: (T + 100) * 1000,
      },
      {
        name: 'a known key whose cosignature does not verify',
        policy,
        checkpoint: tampered,
        now: (T + 160) * 1000,
        valid: false,
        code: 'BAD_COSIGNATURE',
      },
      {
        name: 'one cosignature only',
        policy,
        checkpoint: signed13 + cosig(w3, text13, T),
        now: (T + 160) * 1000,
        valid: false,
        code: 'NOT_WITNESSED',
      },
      {
        name: 'quorum none needs no cosignature',
        policy: `log ${log.vkey}\nquorum none\n`,
        checkpoint: signed13,
        now: T * 1000,
        valid: true,
        cosigners: [],
        witnessed_at: null,
      },
      {
        name: 'a log the policy does not list',
        policy: `witness w1 ${w1.vkey}\nquorum w1\n`,
        checkpoint: signed13 + cosig(w1, text13, T),
        now: T * 1000,
        valid: false,
        code: 'LOG_ORIGIN_MISMATCH',
      },
      {
        name: 'not signed by the log',
        policy,
        checkpoint: note(w1, text13) + cosig(w1, text13, T) + cosig(w2, text13, T),
        now: T * 1000,
        valid: false,
        code: 'CHECKPOINT_NOT_SIGNED',
      },
    ];
  })(),
};

const proof = (a: number, b: number) => consistencyProof(async (s, e) => mth(s, e), a, b);
const addCheckpoint = {
  about:
    'c2sp.org/tlog-witness add-checkpoint request bodies, over a log of 13 entries (SHA-256 of "entry <i>"); the checkpoints are signed by the log key of cosignatures.json.',
  valid: [
    { name: 'first submission', body: `old 0\n\n${signed13}`, old: 0, proof: [], checkpoint: signed13 },
    {
      name: 'from size 5',
      body: `old 5\n${(await proof(5, 13)).map(b64).join('\n')}\n\n${signed13}`,
      old: 5,
      proof: (await proof(5, 13)).map(b64),
      checkpoint: signed13,
    },
    { name: 'same size again', body: `old 13\n\n${signed13}`, old: 13, proof: [], checkpoint: signed13 },
  ],
  invalid: [
    { name: 'no empty line', body: `old 0\n${signed13}`.replace('\n\n', '\n') },
    { name: 'no old line', body: `\n${signed13}` },
    { name: 'old with a leading zero', body: `old 05\n\n${signed13}` },
    { name: 'old not a number', body: `old five\n\n${signed13}` },
    { name: 'a proof line that is not 32 bytes', body: `old 5\n${b64(new Uint8Array(31))}\n\n${signed13}` },
    {
      name: '64 proof lines',
      body: `old 5\n${Array(64)
        .fill(b64(new Uint8Array(32)))
        .join('\n')}\n\n${signed13}`,
    },
  ],
};

for (const [file, data] of [
  ['policies.json', policies],
  ['cosignatures.json', cosignatures],
  ['add-checkpoint.json', addCheckpoint],
] as const) {
  writeFileSync(join(DIR, file), `${JSON.stringify(data, null, 2)}\n`);
}
