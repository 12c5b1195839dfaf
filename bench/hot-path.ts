/**
 * `npm run bench:hot-path`: what the gateway costs a request beyond the floor, in CPU time, on a
 * machine others share. Paired rounds, each: the bare node:http floor, the h3 floor, the gateway
 * as shipped (access log to a file, metrics on) on hot records, then on a bad key (401) and on
 * never-audited domains, then the gateway with `--quiet` and no metrics. See docs/benchmarks.md.
 *
 * Usage: npm run bench:hot-path -- --records 10000 --rounds 3 --seconds 5 [--perf-basic-prof]
 * (--perf-basic-prof starts the shipped gateway with node's flag of that name, for `perf record -p PID`;
 * --before DIR adds, in every round, the shipped gateway of another checkout, built, such as the commit before a change.)
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { recordPath } from '../core/layout.ts';
import { auditsFile, benchBuild } from './build.ts';
import { type CpuScenario, cpuReport, cpuRounds, type Pair } from './cpu-per-request.ts';
import { assertPortsFree, domainsOf, ensureTools, pathsScript, startGatewayProcess } from './gateway.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '64' },
    hot: { type: 'string', default: '1000' },
    'perf-basic-prof': { type: 'boolean', default: false },
    before: { type: 'string' },
  },
});
const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'bench/out');
const count = Number(values.records);
const log = (s: string) => process.stderr.write(`bench:hot-path: ${s}\n`);

await mkdir(OUT, { recursive: true });
await ensureTools();
const work = join(OUT, `build-${count}`);
if (!existsSync(join(work, 'records/current'))) {
  log(`building ${count} records`);
  await benchBuild(OUT, count, { coldCaches: false });
}
const key = (
  await run(process.execPath, [
    join(ROOT, 'bin/mvr.js'),
    'apikey',
    'create',
    '--api-keys',
    join(work, 'api-keys.json'),
    '--label',
    'hot-path',
  ])
).stdout.trim();
const hot = (await domainsOf(join(await auditsFile(OUT, count), 'audits.jsonl'))).slice(0, Number(values.hot));
const verify = (domains: string[]) => domains.map((d) => `/v1/verify?domain=${d}`);
const scripts = {
  hot: await pathsScript(OUT, 'hp-hot', verify(hot), `Bearer ${key}`),
  never: await pathsScript(OUT, 'hp-never', verify(hot.map((_, i) => `never-audited-${i}.example`)), `Bearer ${key}`),
  badKey: await pathsScript(OUT, 'hp-badkey', verify(hot), 'Bearer mvr_0000000000_notavalidkeynotavalidkeynotavalidkeynotavali'),
};
const ports = { floor: 18911, h3: 18912, shipped: 18913, quiet: 18914, metrics: 18915, before: 18916, beforeMetrics: 18917 };
await assertPortsFree(Object.values(ports));
const gatewayArgs = [
  ...['--records', join(work, 'records'), '--public', join(work, 'public'), '--api-keys', join(work, 'api-keys.json')],
  ...['--cache-mb', '16', '--rate-limit', '1000000000', '--unauth-rate-limit', '1000000000'],
];
const children: ChildProcess[] = [];
const floorServer = (script: string, port: number) => {
  const child = spawn(process.execPath, [join(ROOT, 'bench', script), String(port), join(work, 'records/current', recordPath(hot[0]!))], {
    stdio: 'ignore',
  });
  children.push(child);
  return child;
};
try {
  const floor = floorServer('node-floor.mjs', ports.floor);
  const h3 = floorServer('h3-floor.mjs', ports.h3);
  const shipped = await startGatewayProcess([...gatewayArgs, '--metrics-port', String(ports.metrics)], ports.shipped, {
    logFile: join(OUT, 'hot-path-access.log'),
    nodeArgs: values['perf-basic-prof'] ? ['--perf-basic-prof'] : [],
  });
  children.push(shipped);
  const quiet = await startGatewayProcess(gatewayArgs, ports.quiet);
  children.push(quiet);
  const before = values.before
    ? await startGatewayProcess([...gatewayArgs, '--metrics-port', String(ports.beforeMetrics)], ports.before, {
        logFile: join(OUT, 'hot-path-before-access.log'),
        bin: join(resolve(values.before), 'bin/mvr.js'),
      })
    : null;
  if (before) children.push(before);
  log(`shipped gateway pid ${shipped.pid}, load average ${(await run('cat', ['/proc/loadavg'])).stdout.trim()}`);
  const url = (port: number) => `http://127.0.0.1:${port}`;
  const names = {
    floor: 'bare node:http, same bytes (floor)',
    h3: 'h3 1.x on node:http, same bytes',
    shipped: 'gateway as shipped (access log, metrics), hot records',
    badKey: 'gateway as shipped, bad API key (401)',
    never: 'gateway as shipped, never-audited domains',
    quiet: 'gateway --quiet, no metrics, hot records',
    before: `gateway as shipped, hot records, before (${values.before})`,
  };
  const scenarios: CpuScenario[] = [
    { name: names.floor, pid: floor.pid!, url: url(ports.floor), script: scripts.hot, answered2xx: true },
    { name: names.h3, pid: h3.pid!, url: url(ports.h3), script: scripts.hot, answered2xx: true },
    { name: names.shipped, pid: shipped.pid!, url: url(ports.shipped), script: scripts.hot, answered2xx: true },
    { name: names.badKey, pid: shipped.pid!, url: url(ports.shipped), script: scripts.badKey, answered2xx: false },
    { name: names.never, pid: shipped.pid!, url: url(ports.shipped), script: scripts.never, answered2xx: true },
    { name: names.quiet, pid: quiet.pid!, url: url(ports.quiet), script: scripts.hot, answered2xx: true },
  ];
  if (before)
    scenarios.splice(2, 0, { name: names.before, pid: before.pid!, url: url(ports.before), script: scripts.hot, answered2xx: true });
  const pairs: Pair[] = [
    [names.shipped, names.floor],
    [names.quiet, names.floor],
    [names.h3, names.floor],
    [names.badKey, names.shipped],
    [names.never, names.shipped],
  ];
  if (before) pairs.push([names.before, names.floor], [names.shipped, names.before]);
  const { medians, paired } = await cpuRounds(scenarios, pairs, {
    rounds: Number(values.rounds),
    seconds: Number(values.seconds),
    connections: Number(values.connections),
    log,
  });
  log(`load average at the end ${(await run('cat', ['/proc/loadavg'])).stdout.trim()}`);
  await writeFile(join(OUT, 'hot-path.json'), JSON.stringify({ medians, paired: Object.fromEntries(paired) }, null, 2));
  const heading = `server (${values.connections} connections, ${values.seconds} s, median of ${values.rounds} rounds, ${hot.length} hot records of ${count})`;
  process.stdout.write(`${cpuReport(medians, paired, heading).join('\n')}\n`);
} finally {
  for (const child of children) child.kill('SIGTERM');
}
