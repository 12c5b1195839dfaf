/**
 * `npm run bench:lookups [-- --records DIR --public DIR --packs N --lookups N]`: what a lookup
 * costs a gateway reading a bucket, counted at the local S3-compatible test server (requests, and
 * bytes of the answers' bodies): taking the live build (from cold: its pointer, key set,
 * statement, domain map and pack index), then a record's first lookup (one ranged read of its
 * pack), the same record again (warm: from memory), and a never-audited domain.
 *
 * Without --records the sample audits are built in a temporary folder. The build's statement,
 * map, pack index, manifest and key set are uploaded with the first --packs packs (not every pack:
 * a lookup's cost does not depend on how many there are), and the records looked up are taken
 * evenly from those packs. Runs on the service the routes call (`RecordsService`), as
 * bench/history.ts does.
 */
import { mkdtemp, readFile, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { KEY_SET_PATH, parseKeySet } from '@merchant-verify/verifier';
import { packPath, packsHeadOf, splitPack } from '#shared';
import { runBuild } from '../builder/build.ts';
import {
  BUILD_KEY_SET_OBJECT,
  BUILD_STATEMENT_FILE,
  CURRENT_LINK,
  DOMAIN_MAP_FILE,
  MANIFEST_FILE,
  PACK_INDEX_FILE,
} from '../core/layout.ts';
import { defaultSchemaUrl } from '../core/rules/record.ts';
import { keygen } from '../keyring/signing-keys.ts';
import { openRecordsStack } from '../service/records-stack.ts';
import { openStore } from '../storage/open.ts';
import { publishedBuildsOf } from '../storage/store.ts';
import { storeSettingsFromEnv } from '../storage/url.ts';
import { startS3 } from '../test/support/s3-server.ts';

const BUCKET = 'lookups';
const PREFIX = 'bench';
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

const { values } = parseArgs({
  options: {
    records: { type: 'string' },
    public: { type: 'string' },
    packs: { type: 'string', default: '4' },
    lookups: { type: 'string', default: '200' },
  },
});

/** A records and a public folder: the ones given, or the sample audits built now. */
async function project(): Promise<{ records: string; public: string }> {
  if (values.records) return { records: values.records, public: values.public ?? join(values.records, '..', 'public') };
  const root = await mkdtemp(join(tmpdir(), 'mvr-bench-lookups-'));
  const p = { records: join(root, 'records'), public: join(root, 'public') };
  const keysDir = join(root, 'keys');
  await keygen(keysDir);
  const issuer = 'merchant-verify.example';
  await runBuild({
    auditsDir: 'audits',
    recordsDir: p.records,
    publicDir: p.public,
    keysDir,
    issuer,
    schemaUrl: defaultSchemaUrl(issuer),
    signingKey: undefined,
    now: Date.now(),
  });
  return p;
}

const p = await project();
const dir = await realpath(join(p.records, CURRENT_LINK));
const build = basename(dir);
const statement = JSON.parse(await readFile(join(dir, BUILD_STATEMENT_FILE), 'utf8')) as { issuer: string; records: number };
const packs = packsHeadOf(statement);
if (!packs || typeof packs === 'string') throw new Error(`${dir}: a build made before packs (${packs})`);
const keySet = await readFile(join(p.public, KEY_SET_PATH));

const s3 = await startS3([BUCKET]);
const url = `s3://${BUCKET}/${PREFIX}`;
const to = openStore(storeSettingsFromEnv(url, s3.env, { bulk: true, flag: '--to' }));
const bucket = publishedBuildsOf(to, '--to');
const uploaded = packs.files.slice(0, Number(values.packs));
const domains: string[] = [];
try {
  const put = (name: string, body: Buffer) => bucket.putBuildFile(build, name, body);
  for (const name of [BUILD_STATEMENT_FILE, DOMAIN_MAP_FILE, PACK_INDEX_FILE, MANIFEST_FILE])
    await put(name, await readFile(join(dir, name)));
  await put(BUILD_KEY_SET_OBJECT, keySet);
  const perPack = Math.ceil(Number(values.lookups) / uploaded.length);
  for (const { sha256 } of uploaded) {
    const body = await readFile(join(dir, packPath(sha256)));
    await put(packPath(sha256), body);
    const records = splitPack(body);
    if (typeof records === 'string') throw new Error(`${packPath(sha256)}: ${records}`);
    const step = Math.max(1, Math.floor(records.length / perPack));
    for (let i = 0; i < records.length && domains.length < Number(values.lookups); i += step)
      domains.push((JSON.parse(Buffer.from(records[i]!).toString('utf8')) as { domain: string }).domain);
  }
  await bucket.putLive({ build, published_at: new Date().toISOString(), records: statement.records });

  /** Requests and bytes the server answered while `f` ran. */
  const counted = async (f: () => Promise<unknown>) => {
    const [requests, bytes, at] = [s3.requests.length, s3.bytesOut, performance.now()];
    await f();
    return { requests: s3.requests.length - requests, bytes: s3.bytesOut - bytes, ms: performance.now() - at };
  };
  const open = () =>
    openRecordsStack({
      store: storeSettingsFromEnv(url, s3.env, { publicDir: '/nonexistent' }),
      issuer: statement.issuer,
      schemaUrl: defaultSchemaUrl(statement.issuer),
      cacheBytes: 256 * 1024 * 1024,
      trust: { trustedKeys: parseKeySet(JSON.parse(keySet.toString('utf8'))) },
    });
  // Opening the records takes the live build: what a gateway reads once per build.
  let stack!: Awaited<ReturnType<typeof open>>;
  const take = await counted(async () => (stack = await open()));
  try {
    const cold = [];
    for (const d of domains) cold.push(await counted(async () => stack.records.recordFor(d)));
    const warm = [];
    for (const d of domains) warm.push(await counted(async () => stack.records.recordFor(d)));
    const never = await counted(async () => stack.records.recordFor('never-audited-bench.example'));
    const mean = (xs: { requests: number; bytes: number; ms: number }[], k: 'requests' | 'bytes' | 'ms') =>
      xs.reduce((a, x) => a + x[k], 0) / xs.length;
    const rows = [
      ['taking the build (once per build)', take.requests, take.bytes, take.ms],
      [`a record's first lookup (mean of ${cold.length})`, mean(cold, 'requests'), mean(cold, 'bytes'), mean(cold, 'ms')],
      ['the same record again (warm)', mean(warm, 'requests'), mean(warm, 'bytes'), mean(warm, 'ms')],
      ['a never-audited domain', never.requests, never.bytes, never.ms],
    ] as const;
    console.log(`${fmt(statement.records)} records in ${packs.files.length} packs (${uploaded.length} uploaded), build ${build}`);
    console.log('| lookup | requests | bytes | ms |\n|---|---|---|---|');
    for (const [what, requests, bytes, ms] of rows) console.log(`| ${what} | ${fmt(requests, 2)} | ${fmt(bytes)} | ${fmt(ms, 1)} |`);
    console.log(
      JSON.stringify({
        records: statement.records,
        packs: packs.files.length,
        take,
        cold: { max: Math.max(...cold.map((c) => c.requests)) },
      }),
    );
  } finally {
    await stack.close();
  }
} finally {
  await to.close();
  await s3.close();
}
