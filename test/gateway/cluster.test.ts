/**
 * `mvr serve --workers 2`: two gateway processes on one port (node cluster). Every request is
 * answered whichever process takes it; a process that dies is replaced, and so are all of them
 * dying at once; SIGTERM stops them all.
 */
import { execFileSync, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../access/api-keys.ts';
import { cleanup } from '../support/gateway.ts';
import { freePort } from '../support/ports.ts';
import { makeProject, ROOT } from '../support/project.ts';
import { poll, waitForExit } from '../support/wait.ts';

afterAll(cleanup);

describe('mvr serve --workers 2', () => {
  it('serves from two processes, replaces one that dies or every one at once, and stops them all on SIGTERM', async () => {
    const project = await makeProject();
    const { key } = await createApiKey(project.apiKeysFile, 'cluster');
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        'bin/mvr.js',
        'serve',
        '--workers',
        '2',
        '--port',
        String(port),
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
      const workers = () =>
        execFileSync('pgrep', ['-P', String(child.pid), '-f', 'bin/mvr.js'], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .map(Number);
      expect(workers()).toHaveLength(2);
      // New connections are spread over the processes; every one gets the record.
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/v1/verify?domain=acme-outdoor.example`, {
          headers: { authorization: `Bearer ${key}`, connection: 'close' },
        });
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
      await poll(
        async () => (out.match(/"msg":"listening"/g) ?? []).length,
        (n) => n === 3,
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      expect(workers()).not.toContain(victim);
      // Every process gone at once (an out-of-memory kill, say): the primary stays and starts two more.
      const all = workers();
      for (const pid of all) process.kill(pid, 'SIGKILL');
      await poll(
        async () => (out.match(/"msg":"listening"/g) ?? []).length,
        (n) => n === 5,
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      expect(child.exitCode).toBeNull();
      expect(workers().filter((pid) => all.includes(pid))).toEqual([]);
      expect(workers()).toHaveLength(2);
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(200);
      child.kill('SIGTERM');
      expect(await waitForExit(child, 'mvr serve --workers 2 after SIGTERM', () => out)).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
