import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, createReadStream, openSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { recordPath } from '../core/layout.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p50ms: number;
  p99ms: number;
  non2xx: number;
  /** Requests wrk saw answered in the run. */
  requests?: number;
  /** Lowest and highest requests per second over the rounds, when the scenario ran several. */
  spread?: [number, number];
}

/** wrk with latency percentiles; the Lua script picks each request's path. */
export async function wrk(url: string, script: string, seconds: number, connections: number): Promise<Omit<LoadResult, 'name'>> {
  const { stdout } = await run('wrk', ['-t2', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, url], { maxBuffer: 1 << 20 });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const pct = (p: string) => toMs(new RegExp(`\\s${p}%\\s+([\\d.]+\\w+)`).exec(stdout)?.[1] ?? 'NaN');
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1]);
  return { requestsPerSecond: rps, p50ms: pct('50'), p99ms: pct('99'), non2xx, requests };
}

function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(text);
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
}

/** A wrk script that sends each request to a random path from a file, with an Authorization header. */
export function pathsScript(dir: string, name: string, paths: string[], authorization: string): Promise<string> {
  return wrkScript(
    dir,
    name,
    paths,
    `math.randomseed(42)
wrk.headers["Authorization"] = "${authorization}"
request = function() return wrk.format("GET", paths[math.random(#paths)]) end
`,
  );
}

/**
 * A wrk script that asks each path of a file in turn, over and over (each wrk thread from its own
 * place in the list): a rotating hot set, every record asked as often as every other.
 */
export function rotatingScript(dir: string, name: string, paths: string[], authorization: string): Promise<string> {
  return wrkScript(
    dir,
    name,
    paths,
    `local threads = 0
function setup(thread)
  thread:set("start", threads * 7919)
  threads = threads + 1
end
local i = nil
wrk.headers["Authorization"] = "${authorization}"
request = function()
  i = ((i or start or 0) % #paths) + 1
  return wrk.format("GET", paths[i])
end
`,
  );
}

/** Writes `paths` to a file beside a wrk script that reads them into `paths`, then runs `lua`; the script's path. */
async function wrkScript(dir: string, name: string, paths: string[], lua: string): Promise<string> {
  const list = join(dir, `${name}.paths`);
  await writeFile(list, `${paths.join('\n')}\n`);
  const script = join(dir, `${name}.lua`);
  await writeFile(script, `local paths = {}\nfor line in io.lines("${list}") do paths[#paths + 1] = line end\n${lua}`);
  return script;
}

/** Asks every path once, a few at a time, with a Bearer key; throws on an answer that is not 200. */
export async function askEach(base: string, paths: string[], key: string, inFlight = 8): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

/** Domains of a JSONL audit file (already normalized by the generator). */
export async function domainsOf(auditsJsonl: string, limit = Infinity): Promise<string[]> {
  const out: string[] = [];
  for await (const line of createInterface({ input: createReadStream(auditsJsonl) })) {
    const m = /"domain":"([^"]+)"/.exec(line);
    if (m) out.push(m[1]!);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * Throws unless every port is free on 127.0.0.1. A server left over from an earlier run would
 * answer the health check of the one started in its place (which then fails to bind) and be
 * measured instead: nginx with another run's API key, for one, answers every request with a 401.
 */
export async function assertPortsFree(ports: number[]): Promise<void> {
  for (const port of ports) {
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          new Error(
            error.code === 'EADDRINUSE'
              ? `port ${port} is in use (a server left from an earlier run?); stop it first`
              : `port ${port}: ${error.message}`,
          ),
        ),
      );
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
    });
  }
}

/**
 * Starts `mvr serve` in its own process and waits for /healthz. With `logFile`, as shipped: the
 * access log on, written to that file (as to a file or journald in production); without, `--quiet`.
 * `nodeArgs` go to node itself (`--perf-basic-prof` to profile it with perf); `bin` is another
 * checkout's `bin/mvr.js` (an earlier version, measured beside this one).
 */
export async function startGatewayProcess(
  args: string[],
  port: number,
  opts: { logFile?: string; nodeArgs?: string[]; bin?: string } = {},
): Promise<ChildProcess> {
  const stdout = opts.logFile ? openSync(opts.logFile, 'w') : 'ignore';
  const child = spawn(
    process.execPath,
    [
      ...(opts.nodeArgs ?? []),
      opts.bin ?? join(ROOT, 'bin/mvr.js'),
      'serve',
      ...(opts.logFile ? [] : ['--quiet']),
      '--port',
      String(port),
      ...args,
    ],
    { stdio: ['ignore', stdout, 'inherit'] },
  );
  if (typeof stdout === 'number') closeSync(stdout);
  await waitFor(`http://127.0.0.1:${port}/healthz`, child);
  return child;
}

/**
 * Starts nginx serving `root` under /r/ behind a Bearer map: the same files, no checks but the
 * key. It also serves them under /origin/ without a key, as the object store or CDN origin a
 * gateway reads with `--records http://.../origin/` (the benchmark's HTTP-origin gateway).
 */
export async function startNginx(dir: string, root: string, port: number, apiKey: string, workers: number): Promise<ChildProcess> {
  await mkdir(join(dir, 'nginx/logs'), { recursive: true });
  const conf = join(dir, 'nginx/nginx.conf');
  await writeFile(
    conf,
    `${process.getuid?.() === 0 ? 'user root;\n' : ''}worker_processes ${workers};
worker_rlimit_nofile 65536;
error_log ${dir}/nginx/logs/error.log warn;
pid ${dir}/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  map_hash_bucket_size 256;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  open_file_cache max=1000 inactive=20s;
  map $http_authorization $authorized { default 0; "Bearer ${apiKey}" 1; }
  server {
    listen 127.0.0.1:${port};
    location /r/ {
      if ($authorized = 0) { return 401; }
      alias ${root}/;
      default_type application/json;
      add_header Cache-Control "public, max-age=60, s-maxage=300";
      add_header Vary Authorization;
    }
    location /origin/ {
      alias ${root}/;
      default_type application/json;
    }
    location = /healthz { return 200 "ok"; }
  }
}
`,
  );
  const child = spawn('nginx', ['-p', join(dir, 'nginx'), '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitFor(`http://127.0.0.1:${port}/healthz`, child);
  return child;
}

/** The nginx path of a domain's file: the same file the gateway serves. */
export function nginxPath(domain: string): string {
  return `/r/${recordPath(domain)}`;
}

/** One scrape of a gateway's metrics: its size, how long it took, and the requests counted in it. */
export async function scrapeMetrics(url: string): Promise<{ bytes: number; ms: number; requests: number }> {
  const started = performance.now();
  const text = await (await fetch(url)).text();
  const ms = performance.now() - started;
  let requests = 0;
  for (const m of text.matchAll(/^mvr_requests_total\{[^}]*\} (\d+)$/gm)) requests += Number(m[1]);
  return { bytes: Buffer.byteLength(text), ms, requests };
}

/** Peak and current resident memory of a process, MB. */
export async function rssOf(pid: number): Promise<{ rssMb: number; peakMb: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) };
}

async function waitFor(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`${child.spawnargs.join(' ')} exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

/** Installs nginx and wrk from Debian when absent (the benchmark may; tests never do). */
export async function ensureTools(): Promise<void> {
  const missing: string[] = [];
  for (const [bin, pkg] of [
    ['nginx', 'nginx-light'],
    ['wrk', 'wrk'],
  ] as const) {
    try {
      await run('which', [bin]);
    } catch {
      missing.push(pkg);
    }
  }
  if (missing.length === 0) return;
  process.stderr.write(`bench: installing ${missing.join(', ')} from Debian\n`);
  await run('apt-get', ['update', '-qq']);
  await run('apt-get', ['install', '-y', '-qq', ...missing]);
}
