import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

export interface GatewayArgs {
  recordsDir: string;
  publicDir: string;
  keysDir: string;
  apiKeysFile: string;
  cacheMb: number;
  /** Starts node with `--inspect=127.0.0.1:<port>` so the soak can read the gateway's V8 heap. */
  inspectPort?: number;
}

/**
 * `node bin/mvr.js serve` in its own process (the real CLI, nothing of the gateway imported
 * here). The handle exists from the moment of the spawn, so the caller can always kill it.
 */
export class GatewayProcess {
  readonly child: ChildProcess;
  readonly url: string;
  private tail: string[] = [];
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  /** Set by the caller when it stops the gateway, so the exit is not reported as a crash. */
  stopping = false;

  constructor(
    readonly port: number,
    args: GatewayArgs,
    onUnexpectedExit: (info: string) => void,
  ) {
    this.url = `http://127.0.0.1:${port}`;
    this.child = spawn(
      process.execPath,
      [
        ...(args.inspectPort ? [`--inspect=127.0.0.1:${args.inspectPort}`] : []),
        join(ROOT, 'bin/mvr.js'),
        'serve',
        '--quiet',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--records',
        args.recordsDir,
        '--public',
        args.publicDir,
        '--keys',
        args.keysDir,
        '--api-keys',
        args.apiKeysFile,
        '--cache-mb',
        String(args.cacheMb),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], cwd: ROOT, env: gatewayEnv() },
    );
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => {
      // Node's own inspector banner is not the gateway's output.
      this.tail.push(
        ...chunk.split('\n').filter((l) => l && !/^(Debugger listening on|Debugger attached|For help, see: https:\/\/nodejs.org)/.test(l)),
      );
      if (this.tail.length > 40) this.tail.splice(0, this.tail.length - 40);
    });
    this.child.on('exit', (code, signal) => {
      this.exitInfo = { code, signal };
      if (!this.stopping) onUnexpectedExit(`gateway exited (code ${code}, signal ${signal}); stderr: ${this.stderrTail() || '(empty)'}`);
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  alive(): boolean {
    return this.exitInfo === null && this.child.exitCode === null;
  }

  stderrTail(): string {
    return this.tail.slice(-10).join(' | ');
  }

  /** Waits for GET /healthz to answer 200: at most 150 tries, 100 ms apart. */
  async ready(): Promise<void> {
    for (let i = 0; i < 150; i++) {
      if (!this.alive()) throw new Error(`the gateway exited before it was ready: ${this.stderrTail()}`);
      try {
        const res = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(2000) });
        await res.arrayBuffer();
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the gateway did not answer ${this.url}/healthz within 15 s`);
  }

  /** SIGTERM (graceful), then SIGKILL after 5 s. Resolves once the process is gone. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (!this.alive()) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }

  /** Synchronous last resort (process 'exit' handler). */
  killNow(): void {
    this.stopping = true;
    if (this.alive()) this.child.kill('SIGKILL');
  }
}

/**
 * The environment of the gateway: no MVR_* of the caller's (an http MVR_RECORDS_DIR would win
 * over --records), one process (RSS is read from one pid), and the rate limits off: the soak
 * sends thousands of requests a second with one key from one address, far over the default
 * quotas (6000/min per key, 600/min per address without a key), and every answer must be the
 * real one, so a 429 counts as a wrong answer. Variables a gateway does not know are ignored.
 */
function gatewayEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MVR_')) env[k] = v;
  return { ...env, MVR_WORKERS: '1', MVR_RATE_LIMIT: '0', MVR_UNAUTH_RATE_LIMIT: '0' };
}

/** A free loopback port, from the kernel (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r, j) => server.once('error', j).listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (!address || typeof address === 'string') throw new Error('could not get a free port');
  return address.port;
}

/** Resident memory of a process in kB (VmRSS) and its peak (VmHWM), from /proc/<pid>/status. */
export async function rssKb(pid: number): Promise<{ rssKb: number; hwmKb: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') };
}

/** CPU seconds a process has used (user + system), from /proc/<pid>/stat; ticks are 1/100 s on Linux. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces: the fields after it start past the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
