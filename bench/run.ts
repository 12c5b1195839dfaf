import { type ChildProcess, execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { recordPath } from '../core/layout.ts';
import { auditsFile, benchBuild, dropCaches, removeRetired, retire, settleDisk } from './build.ts';
import { type BuildRow, buildLines, buildRow, flagLines, targetFlags } from './build-report.ts';
import { type CpuScenario, cpuRounds, measureCpu, pairedRatios } from './cpu-per-request.ts';
import { measureEd25519Capacity } from './ed25519-capacity.ts';
import { measureFileCreation } from './file-capacity.ts';
import { askEach, domainsOf, ensureTools, type LoadResult, rssOf, scrapeMetrics } from './gateway.ts';
import { loadScripts } from './load-scripts.ts';
import { connections, gatewayRecords, hotSetSize, rotatingSetSize, rounds, seconds, sizes, values, workers } from './run-options.ts';
import {
  BAD_KEY,
  BEFORE,
  BEFORE_PAIRS,
  type BenchFigures,
  FLOOR,
  GATEWAY_HOT,
  GATEWAY_ROTATING,
  H3_FLOOR,
  judged,
  LOOKUP_FLOOR,
  medianRounds,
  NEVER_AUDITED,
  type OriginDown,
  PAIRS,
  QUIET,
  reportLines,
} from './run-report.ts';
import { PORTS, startBenchServers } from './run-servers.ts';

/** `npm run bench` (options and what it measures: ./run-options.ts; its table: ./run-report.ts). */
const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'bench/out');

await mkdir(OUT, { recursive: true });
await ensureTools();
const log = (s: string) => process.stderr.write(`bench: ${s}\n`);

// With --gateway-only the run goes straight to the gateway's comparisons: no raw capacity, no measured build.
const { capacity, filesPerSecond, builds, flags } = values['gateway-only']
  ? { capacity: null, filesPerSecond: NaN, builds: [], flags: [] }
  : await measureBuilds();

/** The raw capacity and the measured builds (with --builds-only, the whole run). */
async function measureBuilds() {
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
  let rawBefore = capacity;
  for (const n of sizes) {
    log(`build of ${n.toLocaleString('en-US')} audits`);
    const row = await benchBuild(OUT, n, { coldCaches: !values['keep-caches'] });
    const syncSeconds = await settleDisk();
    log(`its files written out to disk in ${syncSeconds.toFixed(1)} s (sync)`);
    const rawAfter = await measureEd25519Capacity(4);
    builds.push(buildRow(row, rawBefore, rawAfter, syncSeconds));
    rawBefore = rawAfter;
  }
  const flags = targetFlags(builds);
  for (const flag of flags) log(`past its target: ${flag}`);
  if (values['builds-only']) {
    process.stdout.write(`${[...buildLines(capacity, filesPerSecond, builds), '', ...flagLines(flags)].join('\n')}\n`);
    await writeFile(join(OUT, 'results.json'), JSON.stringify({ capacity, filesPerSecond, builds, flags }, null, 2));
    await removeRetired(OUT);
    process.exit(0);
  }
  return { capacity, filesPerSecond, builds, flags };
}

// The gateway's records: the build again, with the per-record tree nginx and the floors serve
// (not measured: the builds above are the build's figures).
log(`build of ${gatewayRecords.toLocaleString('en-US')} audits with the per-record tree, for the gateway`);
await benchBuild(OUT, gatewayRecords, { coldCaches: false, tree: true });
await settleDisk();

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
// The rotating hot set: every one of these records asked in turn, as a busy service whose callers
// ask about many merchants sees; its floor holds the same records and looks each request's key
// and domain up.
const rotating = domains.slice(0, rotatingSetSize);
const scripts = await loadScripts(OUT, key, domains, hot, never, rotating);

const results: LoadResult[] = [];
/** Per round, a scenario's requests per second over its reference's in the same round. */
let paired = new Map<string, number[]>();
let cpu: BenchFigures['cpu'] = { medians: [], paired: new Map() };
let memory = { rssMb: NaN, peakMb: NaN };
const servers = await startBenchServers({
  work,
  out: OUT,
  key,
  floorDomain: hot[0]!,
  lookupDomains: rotating,
  cacheMb: values['cache-mb']!,
  workers,
  before: values.before,
  perfBasicProf: values['perf-basic-prof']!,
});
const { gateway, quiet, floor, h3, lookupFloor, nginx, before } = servers;
log(`shipped gateway pid ${gateway.pid}, load average ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
/** What the HTTP-origin gateway answered once nginx was stopped (STORE_UNAVAILABLE expected). */
let originDown: OriginDown = null;
/** The shipped gateway's metrics after the rounds. */
let scrape: Awaited<ReturnType<typeof scrapeMetrics>> | null = null;
try {
  const url = (port: number) => `http://127.0.0.1:${port}`;
  const g = url(PORTS.gateway),
    n = url(PORTS.nginx),
    o = url(PORTS.origin);
  const scenario = async (name: string, url: string, script: string) => {
    const result = await measureCpu({ name, url, script, answered2xx: true }, seconds, connections);
    log(`${name}: ${Math.round(result.requestsPerSecond)} req/s`);
    return result;
  };
  // A working set larger than the gateway's cache: every record of the build, at random. The
  // files are read once first, as on a server that has been serving them: this machine's kernel
  // reclaims page cache that sits unused for a few minutes, and both servers would otherwise
  // measure the disk.
  log('reading every record file once (page cache)');
  for (const d of domains) readFileSync(join(work, 'records/current', recordPath(d)));
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
  // The rotating set is asked in turn, so a cache that does not hold all of it yet misses on every
  // request (an LRU cache under a cyclic pattern): each of its records is asked once first, as a
  // gateway serving them would have, so the rounds measure records in memory, as the hot set does.
  log(`asking each of the ${rotating.length.toLocaleString('en-US')} records of the rotating set once (the gateway's cache)`);
  await askEach(
    g,
    rotating.map((d) => `/v1/verify?domain=${d}`),
    key,
  );
  // The comparisons run in interleaved rounds, so a slow moment of the machine does not fall on
  // one of them alone; the table shows each one's median round. Each scenario with a target sits
  // beside its reference (the floor, then `--quiet`, then the hot records, then the gateway's others;
  // the rotating set beside its own floor), and every other round runs them in the reverse order, so
  // each round compares them with what was measured seconds apart (paired ratios, below the table). Each server's CPU a
  // request is counted from its process, except nginx's (its master is not its workers) and, with
  // --workers, the gateway's (its primary is not the processes that answer).
  const gatewayPid = (child: ChildProcess) => (workers > 1 ? undefined : child.pid);
  const compared: CpuScenario[] = [
    { name: 'nginx, hot records', url: n, script: scripts.nginxHot, answered2xx: true },
    { name: H3_FLOOR, pid: h3.pid, url: url(PORTS.h3), script: scripts.hot, answered2xx: true },
    { name: FLOOR, pid: floor.pid, url: url(PORTS.floor), script: scripts.hot, answered2xx: true },
    { name: QUIET, pid: gatewayPid(quiet), url: url(PORTS.quiet), script: scripts.hot, answered2xx: true },
    ...(before ? [{ name: BEFORE, pid: gatewayPid(before), url: servers.beforeUrl, script: scripts.hot, answered2xx: true }] : []),
    { name: GATEWAY_HOT, pid: gatewayPid(gateway), url: g, script: scripts.hot, answered2xx: true },
    // The bad key's answers are 401s; every other scenario's must be 200 (or 304).
    { name: BAD_KEY, pid: gatewayPid(gateway), url: g, script: scripts.badKey, answered2xx: false },
    { name: NEVER_AUDITED, pid: gatewayPid(gateway), url: g, script: scripts.never, answered2xx: true },
    { name: GATEWAY_ROTATING, pid: gatewayPid(gateway), url: g, script: scripts.rotating, answered2xx: true },
    { name: LOOKUP_FLOOR, pid: lookupFloor.pid, url: url(PORTS.lookupFloor), script: scripts.rotating, answered2xx: true },
  ];
  const pairs = [...PAIRS, ...(before ? BEFORE_PAIRS : [])];
  const measured = await cpuRounds(compared, pairs, { rounds, seconds, connections, log });
  cpu = { medians: measured.medians, paired: measured.paired };
  log(`load average at the end of the rounds ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
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
  paired = pairedRatios(measured.runs, pairs, (r) => r.requestsPerSecond);
  scrape = await scrapeMetrics(`${url(PORTS.metrics)}/metrics`);
  results.push(...medianRounds(measured.runs));
  results.push(...working);
} finally {
  memory = await rssOf(gateway.pid!).catch(() => memory);
  servers.stopAll();
}

const lines = reportLines(
  { capacity, filesPerSecond, builds, flags, results, paired, cpu, scrape, memory, originDown },
  { connections, seconds, rounds, hotCount: hot.length, rotatingCount: rotating.length, gatewayRecords, cacheMb: values['cache-mb']! },
);
await writeFile(
  join(OUT, 'results.json'),
  JSON.stringify(
    {
      ...{ capacity, filesPerSecond, builds, flags, results, paired: Object.fromEntries(paired), memory, originDown, scrape },
      cpu: { medians: cpu.medians, paired: Object.fromEntries(cpu.paired) },
    },
    null,
    2,
  ),
);
process.stdout.write(`${lines.join('\n')}\n`);
// A figure past its target, the build's or the gateway's, is flagged (above, and here); the run itself
// still succeeds, as its figures on a loaded machine are worth keeping either way.
const past = judged(cpu).filter((j) => !j.met);
if (past.length > 0) log(`past target: ${past.map((j) => j.target.what).join('; ')}`);
// Like a scenario answered with the wrong status, an origin gateway still answering once its
// origin is gone is a failed run, not a figure (the figures above are kept).
if (originDown?.status !== 503 || originDown.code !== 'STORE_UNAVAILABLE') {
  log('the HTTP-origin gateway did not answer 503 STORE_UNAVAILABLE once nginx stopped');
  process.exitCode = 1;
}
// Old outputs go last, after every measurement (see retire()).
log('removing old outputs');
await removeRetired(OUT);
