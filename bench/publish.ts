/**
 * `npm run bench:publish -- --project DIR [--concurrency 16] [--reference-records 100000 | --full-reference]`:
 * `mvr publish` of a built project's live build (its packs and other files, not its per-record
 * tree) to the local S3-compatible server the tests use (s3rver behind a Signature V4 check),
 * then the same command again (everything up already: what a resumed publish costs when nothing
 * is missing), beside the reference in the same run: the per-record tree uploaded one object per
 * record, as `mvr publish` did before packs, through the same client and the same number of
 * requests in flight. The reference is measured on the first N record files (100k by default;
 * `--full-reference` uploads them all) and its rate extrapolated to the whole tree.
 *
 * DIR is read, never written: a project holding `records/` (a live build made by `mvr build`)
 * and `public/` (its key set and log): `mvr build` of synthetic audits (bench/generate-audits.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import pLimit from 'p-limit';
import S3rver from 's3rver';
import { BUILDS_DIR, CURRENT_LINK, isRecordFile } from '../core/layout.ts';
import { openStore } from '../storage/open.ts';
import { publishedBuildsOf } from '../storage/store.ts';
import { storeSettingsFromEnv } from '../storage/url.ts';

const { values } = parseArgs({
  options: {
    project: { type: 'string' },
    concurrency: { type: 'string', default: '16' },
    'reference-records': { type: 'string', default: '100000' },
    'full-reference': { type: 'boolean', default: false },
  },
});
if (!values.project) throw new Error('--project DIR is required: a project folder with records/ and public/ (see the comment above)');
const project = resolve(values.project);
const concurrency = Number(values.concurrency);
const ROOT = resolve(import.meta.dirname, '..');
const BUCKET = 'mvr-bench';
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

// s3rver, the S3-compatible server the tests run behind their Signature V4 check: here alone, as
// the benchmark drives the product from outside (it accepts its own fixed account's requests).
const directory = await mkdtemp(join(tmpdir(), 'mvr-bench-s3-'));
const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: BUCKET, configs: [] }] });
const { port } = (await server.run()) as { port: number };
const s3env = {
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  AWS_REGION: 'us-east-1',
  AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
};
/** Objects s3rver holds under a key prefix (each is a file named `<name>._S3rver_object`). */
const objectsUnder = async (prefix: string) =>
  (await readdir(join(directory, BUCKET, prefix), { recursive: true }).catch(() => [])).filter((f) => f.endsWith('._S3rver_object')).length;
try {
  /** `mvr publish` as a user runs it, timed whole (the process included), and the objects then in the bucket by kind. */
  // Run beside this process, not blocking it: the server answering it lives here.
  const publish = async (prefix: string) => {
    const started = performance.now();
    const run = await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, 'bin/mvr.js'),
        'publish',
        '--to',
        `s3://${BUCKET}/${prefix}`,
        '--records',
        join(project, 'records'),
        '--public',
        join(project, 'public'),
        '--concurrency',
        String(concurrency),
        '--json',
      ],
      { env: { ...process.env, ...s3env, MVR_PROGRESS_MS: '600000' }, encoding: 'utf8', maxBuffer: 64 * 1024 ** 2 },
    );
    const seconds = (performance.now() - started) / 1000;
    const summary = JSON.parse(run.stdout) as { records: number; objects: number; bytes: number; uploaded: number; skipped: number };
    return { seconds, summary, build: await objectsUnder(`${prefix}/${BUILDS_DIR}`), log: await objectsUnder(`${prefix}/log`) };
  };

  const first = await publish('packed');
  console.log(
    `packed publish: ${fmt(first.summary.records)} records in ${fmt(first.seconds, 1)} s: ${fmt(first.summary.objects)} objects ` +
      `(${fmt(first.build)} of the build, ${fmt(first.log)} of the log, live.json), ${fmt(first.summary.bytes / 1e6, 1)} MB, ` +
      `${fmt(first.summary.bytes / 1e6 / first.seconds, 1)} MB/s`,
  );
  const again = await publish('packed');
  console.log(
    `the same publish again: ${fmt(again.seconds, 1)} s, ${fmt(again.summary.uploaded)} objects sent, ${fmt(again.summary.skipped)} found up already`,
  );

  // The reference: the live build's per-record files, one PUT each, as publish sent them before packs.
  const buildDir = resolve(join(project, 'records'), await readlink(join(project, 'records', CURRENT_LINK)));
  const shards = (await readdir(buildDir)).filter((d) => /^[0-9a-f]{2}$/.test(d)).sort();
  const all: string[] = [];
  for (const shard of shards) for (const name of (await readdir(join(buildDir, shard))).sort()) all.push(`${shard}/${name}`);
  const records = all.filter(isRecordFile);
  const slice = values['full-reference'] ? records : records.slice(0, Number(values['reference-records']));
  const to = openStore(storeSettingsFromEnv(`s3://${BUCKET}/reference`, s3env, { bulk: true, flag: '--to' }));
  const published = publishedBuildsOf(to, '--to');
  const slot = pLimit(concurrency);
  const started = performance.now();
  let bytes = 0;
  await Promise.all(
    slice.map((path) =>
      slot(async () => {
        const body = await readFile(join(buildDir, path));
        bytes += body.length;
        await published.putBuildFile('reference', path, body);
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  await to.close();
  const rate = slice.length / seconds;
  const whole = records.length / rate;
  console.log(
    `reference, one object per record: ${fmt(slice.length)} of ${fmt(records.length)} record files in ${fmt(seconds, 1)} s ` +
      `(${fmt(rate)} objects/s, ${fmt(bytes / 1e6, 1)} MB); the whole tree at that rate: ${fmt(whole)} s (${fmt(whole / 60, 1)} min), ` +
      `${fmt(records.length)} objects; packed took ${fmt((first.seconds / whole) * 100, 1)}% of that`,
  );
} finally {
  await server.close();
  await rm(directory, { recursive: true, force: true });
}
