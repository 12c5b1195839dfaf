import cluster from 'node:cluster';
import type { LogLine } from './context.ts';

/**
 * `mvr serve --workers N`: N gateway processes sharing one port (node:cluster). The gateway is
 * stateless (records, key set and API keys are files every process reads on its own), so any
 * process can answer any request. A process that dies is replaced; SIGTERM/SIGINT stop every
 * process gracefully and the primary exits when the last one has.
 *
 * Returns true in the primary (which must not serve), false in a worker (which must).
 */
export function runAsCluster(workers: number, log: (line: LogLine) => void): boolean {
  if (workers <= 1 || !cluster.isPrimary) return false;
  let stopping = false;
  const fork = () => cluster.fork();
  for (let i = 0; i < workers; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    log({ level: 'error', msg: 'gateway process exited; starting another', pid: worker.process.pid, code, signal });
    setTimeout(fork, 500).unref();
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log({ level: 'info', msg: 'shutting down', signal, workers: Object.keys(cluster.workers ?? {}).length });
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return true;
}
