import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { recordPath } from '../core/layout.ts';
import { auditsFile, benchBuild, dropCaches, removeRetired, retire, settleDisk } from './build.ts';
import { measureEd25519Capacity } from './ed25519-capacity.ts';
import { measureFileCreation } from './file-capacity.ts';
import {
  assertPortsFree,
  domainsOf,
  ensureTools,
  type LoadResult,
  rssOf,
  scrapeMetrics,
  startGatewayProcess,
  startNginx,
  wrk,
} from './gateway.ts';
import { loadScripts } from './load-scripts.ts';
import { connections, gatewayRecords, hotSetSize, rounds, seconds, sizes, values, workers } from './run-options.ts';
import {
  BAD_KEY,
  type BuildRow,
  FLOOR,
  GATEWAY_HOT,
  medianRounds,
  NEVER_AUDITED,
  type OriginDown,
  pairedRatios,
  QUIET,
  reportLines,
} from './run-report.ts';

/** `npm run bench` (options and what it measures: ./run-options.ts; its table: ./run-report.ts). */
const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'bench/out');

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
const builds: BuildRow[] = [];
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
const scripts = await loadScripts(OUT, key, domains, hot, never);

const results: LoadResult[] = [];
/** Per round, a scenario's requests per second over its reference's in the same round. */
let paired = new Map<string, number[]>();
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
let originDown: OriginDown = null;
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
  paired = pairedRatios(runs);
  scrape = await scrapeMetrics(`http://127.0.0.1:${metricsPort}/metrics`);
  results.push(...medianRounds(runs));
  results.push(...working);
} finally {
  memory = await rssOf(gateway.pid!).catch(() => memory);
  stopAll();
}

const lines = reportLines(
  { capacity, filesPerSecond, builds, results, paired, scrape, memory, originDown },
  { connections, seconds, rounds, hotCount: hot.length, gatewayRecords, cacheMb: values['cache-mb']! },
);
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
