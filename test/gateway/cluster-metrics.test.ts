/**
 * `mvr serve --workers 2 --metrics-port N`: the primary serves the metrics, and one scrape shows
 * both processes' together (prom-client's cluster aggregation over node:cluster's channel).
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../access/api-keys.ts';
import { cleanup } from '../support/gateway.ts';
import { parseMetrics, sampleOf } from '../support/metrics-text.ts';
import { freePort } from '../support/ports.ts';
import { makeProject, ROOT } from '../support/project.ts';
import { poll, waitForExit } from '../support/wait.ts';

afterAll(cleanup);

describe('mvr serve --workers 2 --metrics-port', () => {
  it('one scrape of the primary sums every process', async () => {
    const project = await makeProject();
    const { key } = await createApiKey(project.apiKeysFile, 'cluster-metrics');
    const [port, metricsPort] = [await freePort(), await freePort()];
    const child = spawn(
      process.execPath,
      [
        'bin/mvr.js',
        'serve',
        '--quiet',
        '--workers',
        '2',
        '--port',
        String(port),
        '--metrics-port',
        String(metricsPort),
        '--cache-mb',
        '3',
        '--records',
        project.recordsDir,
        '--public',
        project.publicDir,
        '--api-keys',
        project.apiKeysFile,
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
    try {
      await poll(
        async () => (out.match(/"msg":"listening"/g) ?? []).length,
        (n) => n === 2,
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      expect(out).toContain(`"msg":"serving metrics","url":"http://127.0.0.1:${metricsPort}/metrics"`);
      // A new connection for each, so both processes take some.
      const asked = 12;
      for (let i = 0; i < asked; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/v1/verify?domain=acme-outdoor.example`, {
          headers: { authorization: `Bearer ${key}`, connection: 'close' },
          signal: AbortSignal.timeout(10_000),
        });
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
      child.kill('SIGTERM');
      expect(await waitForExit(child, 'mvr serve --workers 2 after SIGTERM', () => out)).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
