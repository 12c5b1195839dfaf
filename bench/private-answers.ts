/**
 * `npm run bench:private [-- --count N --seconds S --rounds R --sizes-only | --gateway-only]`: what a compact private answer
 * costs, beside the plain lookup in the same run.
 *
 * 1. Sizes at 1k, 100k, 1M and 10M audited domains, from synthetic domain hashes (a signed 10M
 *    build takes about an hour here; a bucket's size depends on the hashes alone): the bits the
 *    rule gives, the smallest and largest bucket, every answer's one size; and, for the sizes up
 *    to 1M, 64 answers encoded from a synthetic map and compressed as a proxy would (gzip, brotli
 *    at quality 5), their spread, and the time to encode every answer (what the build adds). The
 *    old JSON prefix answer's signed size is given by its own formula with records of the plain
 *    answer's size below.
 * 2. A real build of `--count` audits (default 20,000), with a transparency log key (so the statement
 *    carries its log proof, as a production build's does), served by `mvr serve` in its own process:
 *    the gateway's CPU a request (utime + stime from /proc/PID/stat over wrk runs), a compact
 *    lookup of random buckets and the statement a client asks first (`GET /v1/lookup`) beside a
 *    hot `/v1/verify`, paired round by round; the plain answer's
 *    bytes and the compact answer's; the gateway's RSS after every bucket was asked.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import {
  bucketBitsFor,
  bucketHex,
  bucketOf,
  COMPACT_ANSWER_LIMIT,
  compactAnswerBytes,
  DomainMap,
  ENTRY_SIZE,
  encodeCompactAnswer,
  lookupAnswerBytes,
  prefixLengthFor,
  treeHasher,
} from '#shared';
import { auditsFile } from './build.ts';
import { cpuRounds } from './cpu-per-request.ts';
import { domainsOf, ensureTools, pathsScript, rssOf, startGatewayProcess } from './gateway.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const MVR = join(ROOT, 'bin/mvr.js');
const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    port: { type: 'string', default: '18931' },
    // Only the sizes (part 1): no build, no gateway.
    'sizes-only': { type: 'boolean', default: false },
    // Only the gateway (part 2): no synthetic maps encoded.
    'gateway-only': { type: 'boolean', default: false },
  },
});
const log = (s: string) => process.stderr.write(`bench:private: ${s}\n`);
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const sha = (d: Uint8Array | string) => new Uint8Array(createHash('sha256').update(d).digest());

/** A synthetic entry: the domain's hash, a record hash, and verdict members of the kinds records have. */
function entryOf(i: number): Uint8Array {
  const e = new Uint8Array(ENTRY_SIZE);
  const view = new DataView(e.buffer);
  e.set(sha(`shop-${i}.example`), 0);
  e.set(sha(`record ${i}`), 32);
  e[64] = 1 + (i % 3);
  e[65] = i % 4;
  view.setFloat64(66, i % 7 === 0 ? -1 : (i * 37) % 101);
  view.setBigInt64(74, BigInt(Date.UTC(2027, i % 12, 1 + (i % 28))));
  return e;
}

/** Sizes at `n` audited domains: bucket counts from the hashes; answers encoded and compressed when `encode`. */
async function sizesAt(n: number, encode: boolean) {
  const bits = bucketBitsFor(n);
  const counts = new Uint32Array(2 ** bits);
  const entries = encode ? new Array<Uint8Array>(n) : null;
  for (let i = 0; i < n; i++) {
    const e = entries ? entryOf(i) : sha(`shop-${i}.example`);
    counts[bucketOf(e, bits)]!++;
    if (entries) entries[i] = e;
  }
  let smallest = Number.POSITIVE_INFINITY;
  let largest = 0;
  for (const c of counts) {
    smallest = Math.min(smallest, c);
    largest = Math.max(largest, c);
  }
  const bytes = compactAnswerBytes(n, largest);
  let spread: { gzip: number; brotli: number } | null = null;
  // What the build adds: every answer encoded (its run, range proof and padding), ms.
  let writeMs: number | null = null;
  if (entries) {
    entries.sort((a, b) => Buffer.compare(a.subarray(0, 32), b.subarray(0, 32)));
    const map = await DomainMap.fromLeaves(treeHasher(sha), Buffer.concat(entries), { leafSize: ENTRY_SIZE });
    const root = Buffer.from(map.head().root, 'base64');
    const sample = Array.from({ length: Math.min(64, counts.length) }, (_, k) =>
      Math.floor((k * counts.length) / Math.min(64, counts.length)),
    );
    const encode = (bucket: number) => encodeCompactAnswer(sha, { bits, bucket, ...map.bucketRun(bits, bucket), root }, n, bytes);
    const started = performance.now();
    for (let bucket = 0; bucket < counts.length; bucket++) encode(bucket);
    writeMs = performance.now() - started;
    const answers = sample.map(encode);
    const spreadOf = (sizes: number[]) => (Math.max(...sizes) - Math.min(...sizes)) / Math.min(...sizes);
    spread = {
      gzip: spreadOf(answers.map((a) => gzipSync(a).length)),
      brotli: spreadOf(answers.map((a) => brotliCompressSync(a, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }).length)),
    };
  }
  return { n, bits, buckets: counts.length, smallest, largest, bytes, spread, writeMs };
}

/** Part 2: a real build served by `mvr serve`; the plain answer's size, for part 1's JSON formula. */
async function gatewayPart(): Promise<{ plainBytes: number; lines: string[] }> {
  await ensureTools();
  const work = await mkdtemp(join(tmpdir(), 'mvr-bench-private-'));
  const count = Number(values.count);
  log(`building ${fmt(count)} audits`);
  const audits = await auditsFile(work, count);
  await run(process.execPath, [MVR, 'keygen', '--keys', join(work, 'keys')]);
  await run(process.execPath, [MVR, 'keygen', '--log', '--keys', join(work, 'keys')]);
  const dirs = ['--records', join(work, 'records'), '--public', join(work, 'public')];
  await run(process.execPath, [MVR, 'build', '--audits', audits, ...dirs, '--keys', join(work, 'keys')]);
  const apiKeys = join(work, 'api-keys.json');
  const key = (await run(process.execPath, [MVR, 'apikey', 'create', '--api-keys', apiKeys, '--label', 'bench:private'])).stdout.trim();
  const port = Number(values.port);
  const limits = ['--rate-limit', '1000000000', '--unauth-rate-limit', '1000000000'];
  const gateway = await startGatewayProcess([...dirs, '--api-keys', apiKeys, ...limits], port);
  try {
    const base = `http://127.0.0.1:${port}`;
    const headers = { authorization: `Bearer ${key}` };
    const head = Buffer.from(await (await fetch(`${base}/v1/lookup`, { headers })).arrayBuffer());
    const { statement, statement_proof } = JSON.parse(head.toString('utf8')) as {
      statement: { lookup: { bits: number; bucket_bytes: number } };
      statement_proof?: string;
    };
    const hot = (await domainsOf(join(audits, 'audits.jsonl'), 1))[0]!;
    const plain = Buffer.from(await (await fetch(`${base}/v1/verify?domain=${hot}`, { headers })).arrayBuffer());
    const { bits } = statement.lookup;
    const compactPaths = Array.from({ length: 2 ** bits }, (_, b) => `/v1/lookup/${bits}/${bucketHex(b, bits)}`);
    const compact = Buffer.from(await (await fetch(`${base}${compactPaths[0]}`, { headers })).arrayBuffer());
    const rssBefore = await rssOf(gateway.pid!);
    for (const path of compactPaths) await (await fetch(`${base}${path}`, { headers })).arrayBuffer();
    const rssAfter = await rssOf(gateway.pid!);
    log('gateway CPU: hot /v1/verify beside compact lookups');
    const { medians, paired } = await cpuRounds(
      [
        {
          name: 'hot /v1/verify',
          pid: gateway.pid!,
          url: base,
          script: await pathsScript(work, 'verify', [`/v1/verify?domain=${hot}`], headers.authorization),
          answered2xx: true,
        },
        {
          name: 'compact lookup',
          pid: gateway.pid!,
          url: base,
          script: await pathsScript(work, 'compact', compactPaths, headers.authorization),
          answered2xx: true,
        },
        {
          name: 'lookup statement',
          pid: gateway.pid!,
          url: base,
          script: await pathsScript(work, 'statement', ['/v1/lookup'], headers.authorization),
          answered2xx: true,
        },
      ],
      [
        ['compact lookup', 'hot /v1/verify'],
        ['lookup statement', 'hot /v1/verify'],
      ],
      { rounds: Number(values.rounds), seconds: Number(values.seconds), connections: 8, log },
    );
    const rssEnd = await rssOf(gateway.pid!);
    const lines = [
      `\n## Compact private answers: the gateway (a real build of ${fmt(count)} audits, \`mvr serve\`)\n`,
      `Answer bytes: compact ${fmt(compact.length)} (${bits} bits), plain /v1/verify ${fmt(plain.length)}, the statement (\`GET /v1/lookup\`) ${fmt(head.length)} (${statement_proof === undefined ? 'no' : 'with its'} log proof).`,
      '| scenario | CPU a request, µs | req/s | p99 ms |\n|---|---|---|---|',
      ...medians.map((m) => `| ${m.name} | ${fmt(m.cpuUs, 1)} | ${fmt(m.requestsPerSecond)} | ${fmt(m.p99ms, 2)} |`),
      `\nCompact over hot verify, round by round: ${(paired.get('compact lookup / hot /v1/verify') ?? []).map((x) => fmt(x, 2)).join(', ')}`,
      `Statement over hot verify, round by round: ${(paired.get('lookup statement / hot /v1/verify') ?? []).map((x) => fmt(x, 2)).join(', ')}`,
      `Gateway RSS: ${rssBefore.rssMb} MB after one answer, ${rssAfter.rssMb} MB after all ${fmt(compactPaths.length)} buckets once, ${rssEnd.rssMb} MB after the CPU runs (peak ${rssEnd.peakMb} MB).`,
    ];
    return { plainBytes: plain.length, lines };
  } finally {
    gateway.kill('SIGTERM');
  }
}

/** A plain answer's size when no build is made (--sizes-only): the sample build's, as measured with the gateway. */
const PLAIN_BYTES_DEFAULT = 860;
const served = values['sizes-only'] ? null : await gatewayPart();
const plainBytes = served?.plainBytes ?? PLAIN_BYTES_DEFAULT;
const sizes = values['gateway-only'] ? [] : [1_000, 100_000, 1_000_000, 10_000_000];
if (sizes.length > 0) log('sizes at 1k, 100k, 1M (encoded) and 10M (bucket counts)');
const rows = [];
for (const n of sizes) rows.push(await sizesAt(n, n < 10_000_000));
if (rows.length > 0) {
  console.log('\n## Compact private answers: sizes (synthetic hashes)\n');
  console.log(
    '| audited domains | bits | buckets | smallest bucket | largest bucket | compact answer, bytes | within 32 KiB | gzip spread | brotli-5 spread | JSON prefix answer (formula), bytes | plain /v1/verify answer, bytes | every answer encoded, ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
}
for (const r of rows) {
  const L = prefixLengthFor(r.n);
  // The old format: about n/16^L records a prefix (its largest about mean + 5 sigma), each a record of the plain answer's size.
  const mean = r.n / 16 ** L;
  const most = Math.ceil(mean + 5 * Math.sqrt(mean));
  const json = lookupAnswerBytes({ prefixLength: L, size: r.n, maxRecords: most, maxRecordBytes: most * plainBytes, leafSize: ENTRY_SIZE });
  const pct = (x: number | undefined) => (x === undefined ? '-' : `${fmt(x * 100, 2)}%`);
  console.log(
    `| ${fmt(r.n)} | ${r.bits} | ${fmt(r.buckets)} | ${r.smallest} | ${r.largest} | ${fmt(r.bytes)} | ${r.bytes <= COMPACT_ANSWER_LIMIT ? 'yes' : 'NO'} | ${pct(r.spread?.gzip)} | ${pct(r.spread?.brotli)} | ${fmt(json)} | ${fmt(plainBytes)} | ${r.writeMs === null ? '-' : fmt(r.writeMs)} |`,
  );
}
for (const line of served?.lines ?? []) console.log(line);
