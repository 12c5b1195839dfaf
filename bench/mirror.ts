/**
 * `npm run bench:mirror -- --project DIR [--concurrency 4]`: `mvr mirror` of a built project's live
 * build from the local S3-compatible server the tests use (s3rver behind a Signature V4 check) into
 * an empty folder: time, bytes, records verified per second, peak RSS; then the same command again
 * (the build live already: nothing fetched). Beside it, in the same run, raw Ed25519: node:crypto
 * verifying record-sized messages on one core, the floor of the mirror's record checks.
 *
 * The bucket is filled as a packed publish fills it (every file of the build but its per-record
 * tree, the key set and log key beside it, the log's tiles and head, the live pointer last), with
 * the bucket client directly. DIR is read, never written: a project holding `records/` and
 * `public/` (`mvr build` of synthetic audits, bench/generate-audits.ts).
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { BUILD_KEY_SET_OBJECT, BUILD_LOG_VKEY_OBJECT, BUILDS_DIR, CURRENT_LINK, LOG_VKEY_PATH } from '../core/layout.ts';
import { openStore } from '../storage/open.ts';
import { publishedBuildsOf } from '../storage/store.ts';
import { storeSettingsFromEnv } from '../storage/url.ts';
import { startS3 } from '../test/support/s3-server.ts';

const { values } = parseArgs({ options: { project: { type: 'string' }, concurrency: { type: 'string', default: '4' } } });
if (!values.project) throw new Error('--project DIR is required: a project folder with records/ and public/ (see the comment above)');
const project = resolve(values.project);
const ROOT = resolve(import.meta.dirname, '..');
const BUCKET = 'mvr-bench-mirror';
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** Runs `work` on `items`, `n` at a time. */
async function inParallel<T>(items: T[], n: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

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
  const buildDir = join(records, BUILDS_DIR, id);
  const store = openStore(storeSettingsFromEnv(`s3://${BUCKET}/prod`, s3.env, { bulk: true, flag: '--to' }));
  const bucket = publishedBuildsOf(store, '--to');
  const filled = performance.now();
  const files = [
    ...(await readdir(join(buildDir, 'packs'))).map((n) => `packs/${n}`),
    ...['statement.json', 'domain-map', 'pack-index', 'manifest.json', 'log-checkpoint', 'index.jsonl'],
  ];
  await inParallel(files, 8, async (f) => bucket.putBuildFile(id, f, await readFile(join(buildDir, f)), 'application/octet-stream'));
  await bucket.putBuildFile(id, BUILD_KEY_SET_OBJECT, await readFile(join(project, 'public', KEY_SET_PATH)));
  await bucket.putBuildFile(id, BUILD_LOG_VKEY_OBJECT, await readFile(join(project, 'public', LOG_VKEY_PATH)), 'text/plain');
  const logDir = join(project, 'public', 'log');
  const tiles = (await readdir(join(logDir, 'tile'), { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(logDir.length + 1));
  await inParallel(tiles, 16, async (t) => bucket.putLogFile(t, await readFile(join(logDir, t))));
  await bucket.putLogHead(await readFile(join(logDir, 'checkpoint')));
  const statement = JSON.parse(await readFile(join(buildDir, 'statement.json'), 'utf8')) as { records: number };
  await bucket.putLive({ build: id, published_at: new Date().toISOString(), records: statement.records });
  await store.close();
  console.log(`bucket filled: ${files.length} build files and ${tiles.length} tiles in ${fmt((performance.now() - filled) / 1000, 1)} s`);

  const raw = rawEd25519PerSecond();
  const mirror = async () => {
    const started = performance.now();
    const run = await promisify(execFile)(
      '/usr/bin/time',
      [
        '-f',
        '%M',
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
      { env: { ...process.env, ...s3.env, MVR_PROGRESS_MS: '600000' }, encoding: 'utf8', maxBuffer: 64 * 1024 ** 2 },
    );
    const seconds = (performance.now() - started) / 1000;
    const rssMb = Number(run.stderr.trim().split('\n').at(-1)) / 1024;
    return {
      seconds,
      rssMb,
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
  console.log(
    `again, the build live already: ${fmt(again.seconds, 1)} s, ${again.summary.packs_fetched} packs fetched, unchanged ${again.summary.unchanged}`,
  );
} finally {
  await rm(to, { recursive: true, force: true });
  await s3.close();
}
