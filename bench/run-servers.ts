/** The servers `npm run bench` compares, each in its own process, started together and stopped together. */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { recordPath } from '../core/layout.ts';
import { assertPortsFree, startGatewayProcess, startNginx } from './gateway.ts';

const ROOT = resolve(import.meta.dirname, '..');

export const PORTS = {
  gateway: 18901,
  nginx: 18902,
  floor: 18903,
  quiet: 18904,
  h3: 18905,
  origin: 18906,
  metrics: 18907,
  lookupFloor: 18910,
};
/** With --before: that checkout's gateway and its metrics. */
const BEFORE_PORTS = { gateway: 18908, metrics: 18909 };

export interface BenchServerOptions {
  /** The build's folder (records/, public/, api-keys.json). */
  work: string;
  out: string;
  key: string;
  /** The record whose bytes the floors answer with. */
  floorDomain: string;
  /** The domains whose records the lookup floor holds (the rotating hot set). */
  lookupDomains: string[];
  cacheMb: string;
  workers: number;
  /** Another built checkout whose shipped gateway runs beside this one. */
  before?: string;
  perfBasicProf: boolean;
}

/**
 * The shipped gateway (access log to a file, metrics on their own port), the same with `--quiet`
 * and no metrics, the two floors, nginx, the gateway reading nginx as an HTTP origin, and with
 * `before` another checkout's shipped gateway. If one fails to start, those already started are stopped.
 */
export async function startBenchServers(o: BenchServerOptions) {
  await assertPortsFree([...Object.values(PORTS), ...(o.before ? Object.values(BEFORE_PORTS) : [])]);
  // The quotas stay on (their check is part of every request) but far above what the load reaches.
  const gatewayArgs = [
    ...['--records', join(o.work, 'records'), '--public', join(o.work, 'public'), '--api-keys', join(o.work, 'api-keys.json')],
    ...['--cache-mb', o.cacheMb, '--rate-limit', '1000000000', '--unauth-rate-limit', '1000000000'],
    ...(o.workers > 1 ? ['--workers', String(o.workers)] : []),
  ];
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
    spawn(process.execPath, [join(ROOT, 'bench', script), String(port), join(o.work, 'records/current', recordPath(o.floorDomain))], {
      stdio: 'ignore',
    });
  const shippedArgs = (metricsPort: number) => [...gatewayArgs, '--metrics-port', String(metricsPort)];
  const gateway = await started(
    startGatewayProcess(shippedArgs(PORTS.metrics), PORTS.gateway, {
      logFile: join(o.out, 'gateway-access.log'),
      nodeArgs: o.perfBasicProf ? ['--perf-basic-prof'] : [],
    }),
  );
  const quiet = await started(startGatewayProcess(gatewayArgs, PORTS.quiet));
  const floor = await started(floorServer('node-floor.mjs', PORTS.floor));
  const h3 = await started(floorServer('h3-floor.mjs', PORTS.h3));
  const lookupList = join(o.out, 'lookup-floor.list');
  await writeFile(lookupList, o.lookupDomains.map((d) => `${d}\t${join(o.work, 'records/current', recordPath(d))}\n`).join(''));
  const lookupFloor = await started(
    spawn(process.execPath, [join(ROOT, 'bench/lookup-floor.mjs'), String(PORTS.lookupFloor), lookupList, o.key], { stdio: 'ignore' }),
  );
  const nginx = await started(startNginx(o.out, join(o.work, 'records/current'), PORTS.nginx, o.key, o.workers));
  // The same gateway reading its records from nginx as an HTTP origin (object storage or a CDN
  // origin in production): every cache miss is a fetch over a keep-alive pool, then verified.
  // An origin's key set chooses no key: the published one is pinned, as a deployment must.
  const originArgs = [
    ...gatewayArgs.map((a, i) => (gatewayArgs[i - 1] === '--records' ? `http://127.0.0.1:${PORTS.nginx}/origin/` : a)),
    ...['--trusted-keys', join(o.work, 'public', KEY_SET_PATH)],
  ];
  await started(startGatewayProcess(originArgs, PORTS.origin));
  const before = o.before
    ? await started(
        startGatewayProcess(shippedArgs(BEFORE_PORTS.metrics), BEFORE_PORTS.gateway, {
          logFile: join(o.out, 'gateway-before-access.log'),
          bin: join(resolve(o.before), 'bin/mvr.js'),
        }),
      )
    : null;
  return { gateway, quiet, floor, h3, lookupFloor, nginx, before, beforeUrl: `http://127.0.0.1:${BEFORE_PORTS.gateway}`, stopAll };
}
