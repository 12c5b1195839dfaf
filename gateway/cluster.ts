import cluster, { type Worker } from 'node:cluster';
import type { GatewayOptions } from './context.ts';
import type { JsonLog } from './json-log.ts';
import { serveMetrics } from './metrics-server.ts';

/**
 * `mvr serve --workers N`: N gateway processes sharing one port (node:cluster). The gateway is
 * stateless (records, key set and API keys are files every process reads on its own), so any
 * process can answer any request. A process that dies is replaced; SIGTERM/SIGINT stop every
 * process gracefully (each writes out its log before it exits) and the primary exits when the
 * last one has. With metrics on, the primary serves them: each scrape asks every process for
 * its own and answers their sum, so one scrape shows the whole gateway.
 *
 * Resolves to true in the primary (which must not serve), false in a worker (which must).
 */
export async function runAsCluster(workers: number, log: JsonLog, metrics: GatewayOptions['metrics']): Promise<boolean> {
  if (workers <= 1 || !cluster.isPrimary) return false;
  let stopping = false;
  // prom-client is loaded only when the metrics are served.
  const listener =
    metrics && 'listen' in metrics
      ? await serveMetrics((await import('./metrics.ts')).clusterMetrics(), metrics.listen.host, metrics.listen.port, log.log)
      : null;
  if (listener) log.log({ level: 'info', msg: 'serving metrics', url: listener.url, workers });
  const fork = () => {
    if (!stopping) cluster.fork();
  };
  for (let i = 0; i < workers; i++) fork();
  // A process that has exited can still be listed in `cluster.workers` when its exit is seen (it
  // is dropped once its channel has closed too, which may come first or after), so the primary
  // counts the processes still running, not the processes listed.
  const running = () => Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && !worker.isDead());
  let exiting = false;
  const exitWhenAllStopped = () => {
    if (exiting || running().length > 0) return;
    exiting = true;
    void Promise.all([listener?.close(), log.close()]).finally(() => process.exit(0));
  };
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return exitWhenAllStopped();
    log.log({ level: 'error', msg: 'gateway process exited; starting another', pid: worker.process.pid, code, signal });
    // Not unref'd: with every process gone at once (an out-of-memory kill), this timer is what
    // keeps the primary running to replace them.
    setTimeout(fork, 500);
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const processes = running();
    log.log({ level: 'info', msg: 'shutting down', signal, workers: processes.length });
    for (const worker of processes) worker.process.kill('SIGTERM');
    // None running (each had died and its replacement was not started yet): nothing to wait for.
    exitWhenAllStopped();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return true;
}
