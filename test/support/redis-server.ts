/**
 * A real redis-server (Debian's package) on a free loopback port, for the tests that need one.
 * Without it installed, those tests are skipped and say so; `.ci/run` installs it, so CI runs them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { program } from './programs.ts';
import { waitForExit } from './wait.ts';

export const REDIS = program('redis-server');

export interface TestRedis {
  url: string;
  port: number;
  /** Stops the server (SIGKILL when `hard`), as an outage. */
  stop(hard?: boolean): Promise<void>;
  /** Starts it again on the same port: empty, or with its data when started `persistent`. */
  start(): Promise<void>;
}

/**
 * Starts redis-server on a free port; stop it with `stop()`. `persistent` keeps its data across
 * a restart (append-only file, fsync on every write), as a production Redis would.
 */
export async function startRedis(opts: { persistent?: boolean } = {}): Promise<TestRedis> {
  const path = REDIS.path;
  if (!path) throw new Error('redis-server is not installed');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mvr-redis-'));
  const persistence = opts.persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn(path, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, ...persistence], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 10_000;
    while (!out.includes('Ready to accept connections')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    async stop(hard = false) {
      const c = child;
      if (!c || c.exitCode !== null) return;
      c.kill(hard ? 'SIGKILL' : 'SIGTERM');
      await waitForExit(c, `redis-server after ${hard ? 'SIGKILL' : 'SIGTERM'}`);
    },
  };
}
