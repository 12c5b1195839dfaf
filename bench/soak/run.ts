import { setMaxListeners } from 'node:events';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { KEY_SET_PATH, LOG_KEY_PATH } from '@merchant-verify/verifier';
import { Pool } from 'undici';
import { Checker } from './check.ts';
import { type FaultReport, runFaults } from './faults.ts';
import { cpuSeconds, freePort, GatewayProcess } from './gateway-process.ts';
import { HeapInspector } from './inspector.ts';
import { cleanup, guardProcess, log, signalExit, signalledBy, state, stop } from './lifecycle.ts';
import { getJson, Mix, runLoad, send } from './load.ts';
import { type MirrorReport, runMirrors } from './mirrors.ts';
import { parseOptions, type SoakOptions, UsageError } from './options.ts';
import { formatReport, makeReport } from './report.ts';
import { RssSampler } from './rss.ts';
import { KeySetCache, Stats } from './stats.ts';
import { Timeline } from './timeline.ts';
import { VerifyPool } from './verify-pool.ts';
import { buildAndMark, makeTempDir, prepareWorkspace } from './workspace.ts';

/**
 * `npm run soak`: a bounded soak of the real gateway (`node bin/mvr.js serve`, its own process)
 * on a real build (logged, witnessed by three real witnesses) in a temp folder, with every answer
 * checked (check.ts) and five faults injected on a schedule (faults.ts): a rebuild, the records
 * folder away for 2 s, damaged record files, a key rotation, a witness outage. The load mixes
 * plain lookups, bundles and private lookups (load.ts); beside it, `mvr mirror` runs, full and
 * resumed, one after another (mirrors.ts).
 *
 * Options: --seconds 60 --concurrency 64 --audits 20000 --cache-mb 2 --seed 42 --max-requests N
 * --json. --seconds is the planned load; when a fault (a build under load) is still running then,
 * the load goes on until it ends plus 3 s, never more than max(60 s, --seconds) longer.
 *
 * Passes when: no wrong answer, no 5xx outside the fault windows, every refusal coded with a code
 * the registry has that fits the fault in force, no request without an answer, every fault
 * injected, seen and recovered from without a restart, mirrors made a build live in full and
 * (for a build of more than one pack) resumed, and the gateway's RSS grew
 * less than 10% between the end of the warm-up (10% of --seconds) and the end of the load. Those
 * two RSS readings are taken right after a full GC forced through the gateway's inspector
 * (node --inspect on a loopback port of its own): raw samples swing by tens of MB with the GC's
 * timing, so only readings in the same GC state compare retained memory. Raw samples (once a
 * second) still give the max and the series; a controlled reading every 15 s between the two
 * shows where retained memory went (V8's heap or outside it) and whether it stopped.
 * A cache filling up is not growth: every cache the gateway keeps is bounded by bytes and
 * emptied when its build is no longer live (CACHE_LIMITS, --cache-mb), and the warm-up is long
 * enough for the load to fill them for the live build, so the start reading holds them at their
 * bound; a swap empties them and the load fills them again to no more than that. What the end
 * reading holds beyond the start one is memory that does not stop growing.
 *
 * Exit 0 only when every criterion passed; 1 on failure; 2 usage; 130/143 when interrupted.
 * Loopback only. The gateway runs with MVR_RATE_LIMIT=0 and MVR_UNAUTH_RATE_LIMIT=0.
 */

/** How long after a change (new build, folder back) the gateway may still answer as before. */
const GRACE_MS = 1000;
/** Load kept running after the last fault, so its aftermath is checked too. */
const TAIL_MS = 3000;
/** The end RSS reading is taken this long before the load stops, so it is taken under load like the start one. */
const END_READING_MS = 1500;
/** Controlled readings (after a full GC) between the start and end ones, this far apart. */
const BETWEEN_READINGS_MS = 15_000;

let options: SoakOptions;
try {
  options = parseOptions(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}

// Every request in flight listens to it (the pool adds one abort listener per request).
setMaxListeners(options.concurrency * 4 + 256, stop.signal);
let crashed: string | null = null;
const watchdog = guardProcess((600 + options.seconds * 3 + options.audits / 500) * 1000);

async function main(opts: SoakOptions): Promise<number> {
  const dir = (state.dir = await makeTempDir());
  log(`temp folder ${dir}`);
  log(
    `generating ${opts.audits.toLocaleString('en-US')} audits (seed ${opts.seed}), a signing key, a log key and its three witnesses, API keys`,
  );
  const ws = await prepareWorkspace(dir, opts.audits, opts.seed);
  state.witnesses = ws.witnesses;
  const timeline = new Timeline(performance.now(), GRACE_MS);
  const initial = await buildAndMark(ws, timeline, 'initial');
  log(`initial build: ${initial.summary.records.toLocaleString('en-US')} records in ${(initial.summary.durationMs / 1000).toFixed(1)} s`);

  const port = await freePort();
  // The gateway's inspector (loopback, a port of its own) lets the RSS readings be taken right after a full GC.
  const inspectPort = await freePort();
  const gateway = (state.gateway = new GatewayProcess(
    port,
    {
      recordsDir: ws.recordsDir,
      publicDir: ws.publicDir,
      keysDir: ws.keysDir,
      apiKeysFile: ws.apiKeysFile,
      cacheMb: opts.cacheMb,
      inspectPort,
    },
    (info) => {
      crashed = info;
      log(info);
      stop.abort();
    },
  ));
  await gateway.ready();
  log(`gateway pid ${gateway.pid} on ${gateway.url} (--cache-mb ${opts.cacheMb})`);
  const inspector = (state.inspector = new HeapInspector(inspectPort));
  const haveInspector = await inspector.connect().then(
    () => true,
    (error: Error) => {
      log(`no inspector (${error.message}): RSS start/end will be raw samples`);
      return false;
    },
  );

  const pool = (state.pool = new Pool(gateway.url, {
    connections: opts.concurrency + 4,
    pipelining: 1,
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
    keepAliveTimeout: 4_000,
  }));
  const stats = new Stats();
  const keys = new KeySetCache(() => getJson(pool, KEY_SET_PATH), stats);
  // verifyRecord runs in worker threads; leave a core to the gateway.
  const verifiers = (state.verifiers = new VerifyPool(Math.max(1, Math.min(4, availableParallelism() - 1))));
  const checker = new Checker(timeline, keys, stats, verifiers);
  checker.indexOf = (d) => ws.indexOf.get(d);
  // Bundles and private lookups are checked with the log's key and the witnesses' policy, as a client holding them does.
  verifiers.trust((await readFile(join(ws.publicDir, LOG_KEY_PATH), 'utf8')).trim(), ws.witnesses.clientPolicy);
  const mix = new Mix(ws, timeline, opts.seed);
  mix.useBits(await lookupBits(pool, ws.apiKey));
  await keys.refresh(0);
  const first = await checker.record(await send(pool, mix.record(ws.domains[0]!, 'probe', false)));
  if (first.outcome !== 'ok') throw new Error(`the very first request was already wrong (${first.reason}); not starting the load`);

  const gatewayCpuStart = await cpuSeconds(gateway.pid).catch(() => null);
  const soakCpuStart = process.cpuUsage();
  timeline.t0 = performance.now();
  const t0 = timeline.t0;
  const sampler = (state.sampler = new RssSampler(gateway.pid, t0, haveInspector ? inspector : null));
  sampler.begin();
  let faultsDone: number | null = null;
  const plannedEnd = t0 + opts.seconds * 1000;
  const hardEnd = plannedEnd + Math.max(60_000, opts.seconds * 1000);
  const deadline = () => (faultsDone === null ? hardEnd : Math.min(hardEnd, Math.max(plannedEnd, faultsDone + TAIL_MS)));
  log(`load: ${opts.seconds} s, ${opts.concurrency} in flight; faults at 15%, 35%, 50%, 65%, 80% of the run`);
  const faultsRun: Promise<FaultReport[]> = runFaults({
    ws,
    timeline,
    mix,
    checker,
    send: (p) => send(pool, p, stop.signal),
    getJson: (path) => getJson(pool, path),
    seconds: opts.seconds,
    signal: stop.signal,
    log,
  }).finally(() => (faultsDone = performance.now()));
  const mirrorsRun: Promise<MirrorReport | null> = runMirrors({
    ws,
    url: gateway.url,
    timeline,
    stats,
    until: () => stop.signal.aborted || performance.now() >= deadline(),
    log,
  }).catch((error: Error) => {
    log(`mirrors failed: ${error.stack ?? error.message}`);
    return null;
  });
  const warmupMs = opts.seconds * 100;
  let measuring: Promise<unknown> | null = null;
  const readings = setInterval(() => {
    const now = performance.now();
    if (measuring || stop.signal.aborted) return;
    const which =
      !sampler.start && now >= t0 + warmupMs ? 'start' : sampler.start && !sampler.end && now >= deadline() - END_READING_MS ? 'end' : null;
    // Readings between the two as well, so the timeline shows where memory went and whether it stopped.
    const between = which === null && sampler.start && !sampler.end && now - t0 >= (sampler.points.at(-1)?.atMs ?? 0) + BETWEEN_READINGS_MS;
    if (!which && !between) return;
    measuring = sampler
      .point()
      .then((p) => which && (sampler[which] = p))
      .catch(() => undefined)
      .finally(() => (measuring = null));
  }, 100);
  const progress = setInterval(
    () =>
      log(
        `${Math.round((performance.now() - t0) / 1000)} s: ${stats.total.toLocaleString('en-US')} requests, ${stats.sum(stats.wrong)} wrong, ${stats.sum(stats.unexpected5xx)} unexpected 5xx`,
      ),
    10_000,
  );
  progress.unref();
  let load;
  try {
    load = await runLoad({
      pool,
      mix,
      checker,
      concurrency: opts.concurrency,
      deadline,
      maxRequests: opts.maxRequests,
      signal: stop.signal,
    });
  } finally {
    clearInterval(progress);
    clearInterval(readings);
  }
  const loadMs = performance.now() - t0;
  const gatewayCpuEnd = await cpuSeconds(gateway.pid).catch(() => null);
  const soakCpu = process.cpuUsage(soakCpuStart);
  const faults = await faultsRun;
  const mirrors = await mirrorsRun;
  await measuring;
  // The load stopped before the end reading was due (--max-requests): take it now.
  if (sampler.start && !sampler.end && !signalledBy() && gateway.alive()) sampler.end = await sampler.point().catch(() => undefined);
  await sampler.stop();
  if (signalledBy()) return signalExit(); // interrupted: no verdict to give
  const report = makeReport({
    options: opts,
    stats,
    faults,
    rss: sampler.summary(warmupMs),
    loadMs,
    hitMaxRequests: load.hitMaxRequests,
    mirrors,
    cpu: {
      gatewaySeconds: gatewayCpuStart !== null && gatewayCpuEnd !== null ? Math.round((gatewayCpuEnd - gatewayCpuStart) * 10) / 10 : null,
      soakSeconds: Math.round((soakCpu.user + soakCpu.system) / 1e5) / 10,
      cores: availableParallelism(),
    },
    pid: gateway.pid,
    crashed,
  });
  process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
  return report.pass ? 0 : 1;
}

/** The bits the gateway's live statement gives private lookups (`GET /v1/lookup`), as a client reads them. */
async function lookupBits(pool: Pool, apiKey: string): Promise<number> {
  const res = await pool.request({ method: 'GET', path: '/v1/lookup', headers: { authorization: `Bearer ${apiKey}` } });
  const body = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET /v1/lookup: ${res.statusCode} ${body.slice(0, 200)}`);
  return (JSON.parse(body) as { statement: { lookup: { bits: number } } }).statement.lookup.bits;
}

let code = 1;
try {
  code = await main(options);
} catch (error) {
  if (!signalledBy()) log(`failed: ${(error as Error).stack ?? error}`);
  if (state.gateway && !state.gateway.alive()) log(`gateway stderr: ${state.gateway.stderrTail()}`);
  code = 1;
} finally {
  await cleanup();
  clearTimeout(watchdog);
}
process.exit(signalledBy() ? signalExit() : code);
