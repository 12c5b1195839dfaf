import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { recordPath } from '../core/layout.ts';
import { auditsFile, type BuildBenchRow, benchBuild, dropCaches, removeRetired, retire, settleDisk } from './build.ts';
import { measureEd25519Capacity } from './ed25519-capacity.ts';
import { measureFileCreation } from './file-capacity.ts';
import {
  assertPortsFree,
  domainsOf,
  ensureTools,
  type LoadResult,
  nginxPath,
  pathsScript,
  rssOf,
  scrapeMetrics,
  startGatewayProcess,
  startNginx,
  wrk,
} from './gateway.ts';

/**
 * `npm run bench`: the build beside the machine's raw Ed25519 capacity, and the gateway beside
 * nginx serving the same signed files, all in one run so the ratios compare like with like.
 * Options: --sizes 10000,100000,1000000  --gateway-records 100000  --seconds 10  --connections 64  --workers 1
 *          --rounds 5 (the comparisons run this many times, interleaved; the table shows the median)
 *          --hot 1000 (records in the hot set; as many never-audited domains are asked for)
 *          --keep-caches (do not drop the kernel's caches before each build; see dropCaches())
 */
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    'gateway-records': { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    workers: { type: 'string', default: '1' },
    'cache-mb': { type: 'string', default: '16' },
    rounds: { type: 'string', default: '5' },
    hot: { type: 'string', default: '1000' },
    'keep-caches': { type: 'boolean', default: false },
  },
});
const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'bench/out');
const seconds = Number(values.seconds),
  connections = Number(values.connections),
  workers = Number(values.workers);
const gatewayRecords = Number(values['gateway-records']);
const rounds = Number(values.rounds),
  hotSetSize = Number(values.hot);
const sizes = values.sizes!.split(',').map(Number);
if (!sizes.includes(gatewayRecords)) sizes.push(gatewayRecords);
sizes.sort((a, b) => a - b);

await mkdir(OUT, { recursive: true });
await ensureTools();
const log = (s: string) => process.stderr.write(`bench: ${s}\n`);

log('raw Ed25519 capacity (node:crypto, all cores) and file creation rate');
await settleDisk();
const capacity = await measureEd25519Capacity(4);
await retire(OUT, join(OUT, 'file-capacity'));
// Measured as the builds run: with the kernel's caches dropped first, unless --keep-caches.
if (!values['keep-caches']) await dropCaches();
const filesPerSecond = measureFileCreation(join(OUT, 'file-capacity'));
await retire(OUT, join(OUT, 'file-capacity'));

// Each build is compared with the raw capacity measured just before and just after it (their
// mean): the machine's speed drifts within minutes, and a single measurement at the start would
// flatter or wrong the builds that run later.
// Every build and every raw measurement starts with the disk settled (settleDisk, also inside
// benchBuild): the writeback a build leaves behind is timed on its own, as `syncSeconds`, and
// falls on nothing measured after it.
const builds: (BuildBenchRow & { rawBefore: number; rawAfter: number; ratio: number; syncSeconds: number })[] = [];
let rawBefore = capacity.pairPerSecond;
for (const n of sizes) {
  log(`build of ${n.toLocaleString('en-US')} audits`);
  const row = await benchBuild(OUT, n, { coldCaches: !values['keep-caches'] });
  const syncSeconds = await settleDisk();
  log(`its files written out to disk in ${syncSeconds.toFixed(1)} s (sync)`);
  const rawAfter = (await measureEd25519Capacity(4)).pairPerSecond;
  builds.push({ ...row, rawBefore, rawAfter, ratio: row.recordsPerSecond / ((rawBefore + rawAfter) / 2), syncSeconds });
  rawBefore = rawAfter;
}

log(`gateway on ${gatewayRecords.toLocaleString('en-US')} records, ${connections} connections, ${seconds} s per scenario`);
const work = join(OUT, `build-${gatewayRecords}`);
const { stdout: apiKey } = await run(process.execPath, [
  join(ROOT, 'bin/mvr.js'),
  'apikey',
  'create',
  '--api-keys',
  join(work, 'api-keys.json'),
  '--label',
  'bench',
]);
const key = apiKey.trim();
const domains = await domainsOf(join(await auditsFile(OUT, gatewayRecords), 'audits.jsonl'));
// Like with like: the hot set, the never-audited set and the bad-key requests cover as many
// distinct domains, so the three differ only in what the gateway does with them.
const hot = domains.slice(0, hotSetSize);
const never = Array.from({ length: hot.length }, (_, i) => `never-audited-${i}.example`);
const scripts = {
  hot: await pathsScript(
    OUT,
    'hot',
    hot.map((d) => `/v1/verify?domain=${d}`),
    `Bearer ${key}`,
  ),
  working: await pathsScript(
    OUT,
    'working',
    domains.map((d) => `/v1/verify?domain=${d}`),
    `Bearer ${key}`,
  ),
  never: await pathsScript(
    OUT,
    'never',
    never.map((d) => `/v1/verify?domain=${d}`),
    `Bearer ${key}`,
  ),
  badKey: await pathsScript(
    OUT,
    'badkey',
    hot.map((d) => `/v1/verify?domain=${d}`),
    'Bearer mvr_0000000000_notavalidkeynotavalidkeynotavalidkeynotavali',
  ),
  nginxHot: await pathsScript(OUT, 'nginx-hot', hot.map(nginxPath), `Bearer ${key}`),
  nginxWorking: await pathsScript(OUT, 'nginx-working', domains.map(nginxPath), `Bearer ${key}`),
};

const results: LoadResult[] = [];
const GATEWAY_HOT = 'gateway as shipped (access log on) with metrics on, hot records',
  NEVER_AUDITED = 'gateway, never-audited domains',
  BAD_KEY = 'gateway, bad API key (401)';
const FLOOR = 'bare node:http server, same bytes, no checks (floor)',
  QUIET = 'gateway with --quiet (no access log), metrics off, hot records';
/** Per round, a scenario's requests per second over its reference's in the same round. */
const paired = new Map<string, number[]>();
const gatewayPort = 18901,
  nginxPort = 18902,
  quietPort = 18904,
  metricsPort = 18907;
let memory = { rssMb: NaN, peakMb: NaN };
// The quotas stay on (their check is part of every request) but far above what the load reaches.
const gatewayArgs = [
  '--records',
  join(work, 'records'),
  '--public',
  join(work, 'public'),
  '--api-keys',
  join(work, 'api-keys.json'),
  '--cache-mb',
  values['cache-mb']!,
  '--rate-limit',
  '1000000000',
  '--unauth-rate-limit',
  '1000000000',
  ...(workers > 1 ? ['--workers', String(workers)] : []),
];
// Every process the comparison starts, stopped together at the end or when one fails to start.
const children: ChildProcess[] = [];
const stopAll = () => {
  for (const child of children) child.kill('SIGTERM');
};
const started = async (start: ChildProcess | Promise<ChildProcess>): Promise<ChildProcess> => {
  try {
    const child = await start;
    children.push(child);
    return child;
  } catch (error) {
    stopAll();
    throw error;
  }
};
/** A floor server (bench/*-floor.mjs) answering with one hot record's bytes. */
const floorServer = (script: string, port: number) =>
  spawn(process.execPath, [join(ROOT, 'bench', script), String(port), join(work, 'records/current', recordPath(hot[0]!))], {
    stdio: 'ignore',
  });
const floorPort = 18903,
  originPort = 18906;
await assertPortsFree([gatewayPort, nginxPort, floorPort, originPort, quietPort, metricsPort]);
// The gateway as shipped: its access log written to a file, and metrics served (on their own port).
const gateway = await started(
  startGatewayProcess([...gatewayArgs, '--metrics-port', String(metricsPort)], gatewayPort, { logFile: join(OUT, 'gateway-access.log') }),
);
await started(startGatewayProcess(gatewayArgs, quietPort));
await started(floorServer('node-floor.mjs', floorPort));
const nginx = await started(startNginx(OUT, join(work, 'records/current'), nginxPort, key, workers));
// The same gateway reading its records from nginx as an HTTP origin (object storage or a CDN
// origin in production): every cache miss is a fetch over a keep-alive pool, then verified.
const originArgs = gatewayArgs.map((a, i) => (gatewayArgs[i - 1] === '--records' ? `http://127.0.0.1:${nginxPort}/origin/` : a));
await started(startGatewayProcess(originArgs, originPort));
/** What the HTTP-origin gateway answered once nginx was stopped (STORE_UNAVAILABLE expected). */
let originDown: { status: number; code: string | null; afterMs: number } | null = null;
/** The shipped gateway's metrics after the rounds. */
let scrape: Awaited<ReturnType<typeof scrapeMetrics>> | null = null;
try {
  const g = `http://127.0.0.1:${gatewayPort}`,
    n = `http://127.0.0.1:${nginxPort}`;
  const scenario = async (name: string, url: string, script: string) => {
    await wrk(url, script, 2, connections); // warm-up
    const result = { name, ...(await wrk(url, script, seconds, connections)) };
    // Every scenario but the bad key's is answered 200 (or 304): anything else means the server
    // measured is not answering what the scenario asks (a wrong key, a missing build).
    if (name !== BAD_KEY && result.non2xx > 0) throw new Error(`${name}: ${result.non2xx} answers were not 2xx or 3xx`);
    log(`${name}: ${Math.round(result.requestsPerSecond)} req/s`);
    return result;
  };
  // The comparisons run in interleaved rounds, so a slow moment of the machine does not fall on
  // one of them alone; the table shows each one's median round.
  // The floor runs just before the gateway's hot records, and the gateway's others just after,
  // so each round compares them with the hot records measured seconds apart (paired ratios,
  // below the table).
  const compared: [string, string, string][] = [
    ['nginx, hot records', n, scripts.nginxHot],
    [FLOOR, `http://127.0.0.1:${floorPort}`, scripts.hot],
    [GATEWAY_HOT, g, scripts.hot],
    [BAD_KEY, g, scripts.badKey],
    [NEVER_AUDITED, g, scripts.never],
    [QUIET, `http://127.0.0.1:${quietPort}`, scripts.hot],
  ];
  // A working set larger than the gateway's cache: every record of the build, at random. The
  // files are read once first, as on a server that has been serving them: this machine's kernel
  // reclaims page cache that sits unused for a few minutes, and both servers would otherwise
  // measure the disk.
  log('reading every record file once (page cache)');
  for (const d of domains) readFileSync(join(work, 'records/current', recordPath(d)));
  const o = `http://127.0.0.1:${originPort}`;
  const working = [
    await scenario('nginx, working set (all records)', n, scripts.nginxWorking),
    await scenario(`gateway, working set (all records, cache ${values['cache-mb']} MB)`, g, scripts.working),
    await scenario(
      `gateway with nginx as its HTTP origin (--records http://...), working set (all records, cache ${values['cache-mb']} MB)`,
      o,
      scripts.working,
    ),
    await scenario('gateway with nginx as its HTTP origin, hot records', o, scripts.hot),
  ];
  // The --quiet gateway has not served yet: its cache is filled first, as the shipped one's was.
  await wrk(`http://127.0.0.1:${quietPort}`, scripts.hot, seconds, connections);
  const runs = new Map<string, LoadResult[]>(compared.map(([name]) => [name, []]));
  for (let round = 1; round <= rounds; round++) {
    log(`round ${round} of ${rounds}`);
    for (const [name, url, script] of compared) runs.get(name)!.push(await scenario(name, url, script));
  }
  // The origin goes down: the HTTP-origin gateway must answer 503 STORE_UNAVAILABLE, not serve
  // from a cache it can no longer check against a live build, nor a 404 taken for "never audited".
  nginx.kill('SIGQUIT');
  const downSince = Date.now();
  while (Date.now() - downSince < 15_000) {
    const res = await fetch(`${o}/v1/verify?domain=${domains.at(-1)}`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await res.json().catch(() => null)) as { code?: string } | null;
    originDown = { status: res.status, code: body?.code ?? null, afterMs: Date.now() - downSince };
    if (res.status === 503) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  log(`nginx stopped: the HTTP-origin gateway answered ${originDown?.status} ${originDown?.code ?? ''} after ${originDown?.afterMs} ms`);
  for (const [name, reference] of [
    [GATEWAY_HOT, FLOOR],
    [BAD_KEY, GATEWAY_HOT],
    [NEVER_AUDITED, GATEWAY_HOT],
    [QUIET, FLOOR],
    [GATEWAY_HOT, QUIET],
  ] as const) {
    const referenceRounds = runs.get(reference)!;
    paired.set(
      `${name}, x ${reference === GATEWAY_HOT ? 'gateway hot' : reference === FLOOR ? 'floor' : 'the --quiet gateway'}`,
      runs.get(name)!.map((r, i) => r.requestsPerSecond / referenceRounds[i]!.requestsPerSecond),
    );
  }
  scrape = await scrapeMetrics(`http://127.0.0.1:${metricsPort}/metrics`);
  for (const list of runs.values()) {
    const sorted = [...list].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
    const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
    results.push({ ...median, spread: [sorted[0]!.requestsPerSecond, sorted.at(-1)!.requestsPerSecond] });
  }
  results.push(...working);
} finally {
  memory = await rssOf(gateway.pid!).catch(() => memory);
  stopAll();
}

const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const nginxHot = results.find((r) => r.name === 'nginx, hot records')!.requestsPerSecond;
const gatewayHot = results.find((r) => r.name === GATEWAY_HOT)!.requestsPerSecond;
const floor = results.find((r) => r.name === FLOOR)!.requestsPerSecond;
const spreadOf = (r: LoadResult) => (r.spread ? `${fmt(r.spread[0])}-${fmt(r.spread[1])}` : '1 run');
const lines = [
  `Raw Ed25519 (node:crypto, ${capacity.threads} threads): ${fmt(capacity.signPerSecond)} sign/s, ${fmt(capacity.verifyPerSecond)} verify/s, ${fmt(capacity.pairPerSecond)} sign+verify pairs/s`,
  `File creation (one O_EXCL create + write per record, as the build does): ${fmt(filesPerSecond)} files/s`,
  '',
  `Builds: ${builds.every((b) => b.coldCaches) ? "the kernel's page, dentry and inode caches dropped before each (as on a fresh runner)" : builds.some((b) => b.coldCaches) ? 'caches dropped before some builds only' : "the kernel's caches as the runs before left them (not dropped: --keep-caches, or not root)"}`,
  '',
  '| build | seconds | records/s | raw pairs/s just before / after | x raw sign+verify (their mean) | x file creation | peak RSS MB | then written out (sync) s | of which the log s (share) | log MB | of which the domain map s (share) |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...builds.map(
    (b) =>
      `| ${fmt(b.audits)} | ${fmt(b.seconds, 1)} | ${fmt(b.recordsPerSecond)} | ${fmt(b.rawBefore)} / ${fmt(b.rawAfter)} | ${fmt(b.ratio, 2)} | ${fmt(b.recordsPerSecond / filesPerSecond, 2)} | ${fmt(b.peakRssMb)} | ${fmt(b.syncSeconds, 1)} | ${fmt(b.logSeconds, 1)} (${fmt((100 * b.logSeconds) / b.seconds)}%) | ${fmt(b.logBytes / 1e6, 1)} | ${fmt(b.mapSeconds, 2)} (${fmt((100 * b.mapSeconds) / b.seconds, 1)}%) |`,
  ),
  '',
  `| gateway scenario (${connections} connections, ${seconds} s, median of ${rounds} rounds; hot set ${fmt(hot.length)} records) | req/s | rounds' range | p50 ms | p99 ms | non-2xx | x nginx hot | x floor | x gateway hot |`,
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.name} | ${fmt(r.requestsPerSecond)} | ${spreadOf(r)} | ${fmt(r.p50ms, 2)} | ${fmt(r.p99ms, 2)} | ${fmt(r.non2xx)} | ${fmt(r.requestsPerSecond / nginxHot, 2)} | ${fmt(r.requestsPerSecond / floor, 2)} | ${fmt(r.requestsPerSecond / gatewayHot, 2)} |`,
  ),
  '',
  'Paired: each ratio taken within one round, then their median.',
  ...[...paired].map(
    ([name, ratios]) =>
      `${name}, round by round: ${ratios.map((x) => fmt(x, 2)).join(', ')} (median ${fmt([...ratios].sort((a, b) => a - b)[Math.floor((ratios.length - 1) / 2)]!, 2)})`,
  ),
  `Metrics of the shipped gateway after the rounds: ${scrape ? `${fmt(scrape.requests)} requests counted, a scrape of ${fmt(scrape.bytes)} bytes in ${fmt(scrape.ms, 1)} ms` : 'not scraped'}`,
  '',
  `Gateway memory after the run (${fmt(gatewayRecords)} records, cache ${values['cache-mb']} MB): RSS ${memory.rssMb} MB, peak ${memory.peakMb} MB`,
  `HTTP-origin gateway with its origin (nginx) stopped: ${originDown ? `${originDown.status} ${originDown.code ?? '(no code)'} after ${fmt(originDown.afterMs)} ms` : 'not checked'}`,
];
await writeFile(
  join(OUT, 'results.json'),
  JSON.stringify({ capacity, filesPerSecond, builds, results, paired: Object.fromEntries(paired), memory, originDown, scrape }, null, 2),
);
process.stdout.write(`${lines.join('\n')}\n`);
// Like a scenario answered with the wrong status, an origin gateway still answering once its
// origin is gone is a failed run, not a figure (the figures above are kept).
if (originDown?.status !== 503 || originDown.code !== 'STORE_UNAVAILABLE') {
  log('the HTTP-origin gateway did not answer 503 STORE_UNAVAILABLE once nginx stopped');
  process.exitCode = 1;
}
// Old outputs go last, after every measurement (see retire()).
log('removing old outputs');
await removeRetired(OUT);
