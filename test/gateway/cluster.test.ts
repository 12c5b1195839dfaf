/**
 * `mvr serve --workers 2 --metrics-port N`: two gateway processes on one port (node cluster).
 * One scrape of the primary sums both processes' metrics (prom-client's cluster aggregation over
 * node:cluster's channel); every request is answered whichever process takes it; a process that
 * dies is replaced, and so are all of them dying at once; SIGTERM stops them all. One cluster for
 * both tests (each start is three Node processes): the metrics are read before any process dies.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../access/api-keys.ts';
import { cleanup } from '../support/gateway.ts';
import { parseMetrics, sampleOf } from '../support/metrics-text.ts';
import { freePort } from '../support/ports.ts';
import { makeProject, ROOT } from '../support/project.ts';
import { poll, waitForExit } from '../support/wait.ts';

let child: ChildProcess;
let out = '';
let key: string;
let port: number;
let metricsPort: number;

const listening = (n: number) =>
  poll(
    async () => (out.match(/"msg":"listening"/g) ?? []).length,
    (seen) => seen === n,
    { timeoutMs: 20_000, intervalMs: 100 },
  );
/** A request on a new connection (`connection: close`), so both processes take some. */
const verify = () =>
  fetch(`http://127.0.0.1:${port}/v1/verify?domain=acme-outdoor.example`, {
    headers: { authorization: `Bearer ${key}`, connection: 'close' },
    signal: AbortSignal.timeout(10_000),
  });

beforeAll(async () => {
  const project = await makeProject();
  ({ key } = await createApiKey(project.apiKeysFile, 'cluster'));
  [port, metricsPort] = [await freePort(), await freePort()];
  const args = ['serve', '--quiet', '--workers', '2', '--port', String(port), '--metrics-port', String(metricsPort), '--cache-mb', '3'];
  const folders = ['--records', project.recordsDir, '--public', project.publicDir, '--api-keys', project.apiKeysFile];
  child = spawn(process.execPath, ['bin/mvr.js', ...args, ...folders], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
  await listening(2);
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await cleanup();
});

describe('mvr serve --workers 2 --metrics-port', () => {
  it('one scrape of the primary sums every process', async () => {
    expect(out).toContain(`"msg":"serving metrics","url":"http://127.0.0.1:${metricsPort}/metrics"`);
    const asked = 12;
    for (let i = 0; i < asked; i++) {
      const res = await verify();
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
    expect(res.status).toBe(200);
    const samples = parseMetrics(await res.text());
    expect(sampleOf(samples, 'mvr_requests_total', { route: '/v1/verify', method: 'GET', status: '200' })).toBe(asked);
    expect(sampleOf(samples, 'mvr_verified_cache_hits_total') + sampleOf(samples, 'mvr_verified_cache_misses_total')).toBe(asked);
    // Each process has its own cache of --cache-mb: summed, two of them.
    expect(sampleOf(samples, 'mvr_verified_cache_limit_bytes')).toBe(2 * 3 * 1024 * 1024);
    // One live build, whichever process is asked (not counted once per process).
    const build = samples.find((s) => s.name === 'mvr_build_info');
    expect(build?.value).toBe(1);
  });

  it('serves from two processes, replaces one that dies or every one at once, and stops them all on SIGTERM', async () => {
    const workers = () =>
      execFileSync('pgrep', ['-P', String(child.pid), '-f', 'bin/mvr.js'], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .map(Number);
    expect(workers()).toHaveLength(2);
    // New connections are spread over the processes; every one gets the record.
    for (let i = 0; i < 10; i++) {
      const res = await verify();
      expect(res.status).toBe(200);
      expect(((await res.json()) as { domain: string }).domain).toBe('acme-outdoor.example');
    }
    const [victim] = workers();
    process.kill(victim!, 'SIGKILL');
    await poll(
      async () => out,
      (o) => o.includes('"msg":"gateway process exited; starting another"'),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    await listening(3);
    expect(workers()).not.toContain(victim);
    // Every process gone at once (an out-of-memory kill, say): the primary stays and starts two more.
    const all = workers();
    for (const pid of all) process.kill(pid, 'SIGKILL');
    await listening(5);
    expect(child.exitCode).toBeNull();
    expect(workers().filter((pid) => all.includes(pid))).toEqual([]);
    expect(workers()).toHaveLength(2);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    child.kill('SIGTERM');
    expect(await waitForExit(child, 'mvr serve --workers 2 after SIGTERM', () => out)).toBe(0);
  });
});
