/**
 * `npm run bench:mirror -- --project DIR`: `mvr mirror` of a built project's live
 * build from the local S3-compatible server the tests use (s3rver behind a Signature V4 check) into
 * an empty folder: time, bytes, records verified per second, peak RSS; then the same command again
 * (the build live already: nothing fetched). Beside it, in the same run, raw Ed25519: node:crypto
 * verifying record-sized messages on one core, the floor of the mirror's record checks.
 *
 * The bucket is filled by `mvr publish`, as a user fills it. DIR is read, never written: a project holding `records/` and
 * `public/` (`mvr build` of synthetic audits, bench/generate-audits.ts).
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { mkdtemp, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { CURRENT_LINK } from '../core/layout.ts';
import { startS3 } from '../test/support/s3-server.ts';

const { values } = parseArgs({ options: { project: { type: 'string' } } });
if (!values.project) throw new Error('--project DIR is required: a project folder with records/ and public/ (see the comment above)');
const project = resolve(values.project);
const ROOT = resolve(import.meta.dirname, '..');
const BUCKET = 'mvr-bench-mirror';
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** Raw Ed25519 verifications a second on one core: node:crypto over messages of a record's size. */
function rawEd25519PerSecond(n = 20_000): number {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const message = Buffer.alloc(700, 7);
  const signature = sign(null, message, privateKey);
  const started = performance.now();
  for (let i = 0; i < n; i++) if (!verify(null, message, publicKey, signature)) throw new Error('raw verify failed');
  return n / ((performance.now() - started) / 1000);
}

const s3 = await startS3([BUCKET]);
const to = await mkdtemp(join(tmpdir(), 'mvr-bench-mirror-'));
try {
  const records = join(project, 'records');
  const id = (await readlink(join(records, CURRENT_LINK))).split('/').pop()!;
  const env = { ...process.env, ...s3.env, MVR_PROGRESS_MS: '600000' };
  const filled = performance.now();
  const published = await promisify(execFile)(
    process.execPath,
    [
      join(ROOT, 'bin/mvr.js'),
      'publish',
      '--records',
      records,
      '--public',
      join(project, 'public'),
      '--to',
      `s3://${BUCKET}/prod`,
      '--json',
    ],
    { env, encoding: 'utf8', maxBuffer: 64 * 1024 ** 2 },
  );
  const { objects } = JSON.parse(published.stdout) as { objects: number };
  console.log(`bucket filled by mvr publish: ${fmt(objects)} objects in ${fmt((performance.now() - filled) / 1000, 1)} s`);

  const raw = rawEd25519PerSecond();
  const mirror = async () => {
    const started = performance.now();
    const run = await promisify(execFile)(
      '/usr/bin/time',
      [
        '-f',
        '%M %U %S',
        process.execPath,
        join(ROOT, 'bin/mvr.js'),
        'mirror',
        '--from',
        `s3://${BUCKET}/prod`,
        '--to',
        join(to, 'mirror'),
        '--trusted-keys',
        join(project, 'public', KEY_SET_PATH),
        '--json',
      ],
      { env, encoding: 'utf8', maxBuffer: 64 * 1024 ** 2 },
    );
    const seconds = (performance.now() - started) / 1000;
    const [maxKb, user, system] = run.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
    return {
      seconds,
      rssMb: maxKb! / 1024,
      cpuSeconds: user! + system!,
      summary: JSON.parse(run.stdout) as {
        records: number;
        packs_fetched: number;
        bytes: number;
        seconds: number;
        records_verified: number;
        unchanged: boolean;
      },
    };
  };
  const first = await mirror();
  const again = await mirror();
  const s = first.summary;
  console.log(
    `mirror of build ${id}: ${fmt(s.records)} records, ${s.packs_fetched} packs, ${fmt(s.bytes / 1e6, 1)} MB in ${fmt(first.seconds, 1)} s ` +
      `(${fmt(s.bytes / 1e6 / first.seconds, 1)} MB/s; the command's own ${fmt(s.seconds, 1)} s), ${fmt(s.records_verified / first.seconds)} records verified/s, ` +
      `peak RSS ${fmt(first.rssMb)} MB`,
  );
  console.log(`raw Ed25519 (node:crypto, one core, 700-byte messages): ${fmt(raw)} verifications/s`);
  // The target: every core verifying, at least 1.3 times one core's raw rate (a source on this machine takes its share).
  const ratio = s.records_verified / first.seconds / raw;
  console.log(
    `the mirror: ${fmt(ratio, 2)} x one core's raw verify (target >= 1.3${ratio < 1.3 ? ': PAST TARGET' : ''}); ` +
      `CPU ${fmt((1e6 * first.cpuSeconds) / s.records_verified)} us a record against ${fmt(1e6 / raw)} us a raw verification`,
  );
  console.log(
    `again, the build live already: ${fmt(again.seconds, 1)} s, ${again.summary.packs_fetched} packs fetched, unchanged ${again.summary.unchanged}`,
  );
} finally {
  await rm(to, { recursive: true, force: true });
  await s3.close();
}
