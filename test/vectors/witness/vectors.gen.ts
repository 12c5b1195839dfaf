/**
 * Writes the witness vectors (policies, cosignatures, add-checkpoint bodies), reproducibly:
 *
 *   npx tsx test/vectors/witness/vectors.gen.ts
 *
 * Keys come from fixed seeds; signatures are made by node:crypto (Ed25519 is deterministic), apart
 * from the code under test. test/witness/vectors.test.ts checks every file.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { consistencyProof } from '#shared';
import { b64, cosig, h, log, note, sha, w, w1, w2, w3 } from './keys.ts';
import { policies } from './policies.ts';

const DIR = import.meta.dirname;

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
