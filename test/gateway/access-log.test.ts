/**
 * The access log as `mvr serve` writes it (the compiled bin, in its own process, its stdout
 * read by the test): asynchronous and batched, yet a SIGTERM under load loses no line, and no
 * line carries a key, its secret, or a query member other than the domain.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../access/api-keys.ts';
import { cleanup } from '../support/gateway.ts';
import { makeProject, type Project, ROOT } from '../support/project.ts';
import { poll, waitForExit } from '../support/wait.ts';

afterAll(cleanup);

const BAD_KEY = 'mvr_0000000000_badsecretbadsecretbadsecretbadsecretbadsecre';
/** Query members that must never reach the log. */
const QUERY_SECRET = 'querysecretquerysecret';
const OTHER_MEMBER = 'othermemberothermember';

interface Serving {
  child: ChildProcess;
  url: string;
  /** Everything written on stdout so far. */
  out: () => string;
  /** Its exit code, waiting at most 15 s (a gateway that does not stop fails the test here, with its output). */
  exited: () => Promise<number | null>;
}

async function serve(project: Project): Promise<Serving> {
  const child = spawn(
    process.execPath,
    [
      'bin/mvr.js',
      'serve',
      '--port',
      '0',
      '--records',
      project.recordsDir,
      '--public',
      project.publicDir,
      '--api-keys',
      project.apiKeysFile,
      '--rate-limit',
      '0',
      '--unauth-rate-limit',
      '0',
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  const { value: url } = await poll(
    async () => /"msg":"listening","url":"([^"]+)"/.exec(out)?.[1] ?? null,
    (u) => u !== null,
    { timeoutMs: 20_000, intervalMs: 50 },
  );
  return { child, url: url!, out: () => out, exited: () => waitForExit(child, 'mvr serve after SIGTERM', () => out) };
}

/** The access lines in the output, parsed (every line must be JSON). */
function requestLines(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'request');
}

describe('mvr serve access log', () => {
  it('under concurrent load, a SIGTERM loses no line: every answered request is in the log', async () => {
    const project = await makeProject();
    const { key } = await createApiKey(project.apiKeysFile, 'access-log');
    const s = await serve(project);
    try {
      const answered: string[] = [];
      let next = 0;
      let stopped = false;
      // 16 clients asking one never-audited domain each time, each domain naming its request.
      const client = async () => {
        while (!stopped) {
          const domain = `load-${next++}.example`;
          try {
            const res = await fetch(`${s.url}/v1/verify?domain=${domain}`, { headers: { authorization: `Bearer ${key}` } });
            await res.arrayBuffer();
            if (res.status === 200) answered.push(domain);
          } catch {
            return; // the gateway has stopped taking requests
          }
        }
      };
      const clients = Array.from({ length: 16 }, client);
      try {
        await poll(
          async () => answered.length,
          (n) => n >= 400,
          { timeoutMs: 30_000, intervalMs: 5 },
        );
        s.child.kill('SIGTERM');
        await Promise.race([Promise.all(clients), s.exited()]);
      } finally {
        stopped = true; // the clients stop asking even when the wait above fails
      }
      expect(await s.exited()).toBe(0);
      const logged = new Set(requestLines(s.out()).map((l) => l.domain));
      const missing = answered.filter((d) => !logged.has(d));
      expect(missing).toEqual([]);
      expect(answered.length).toBeGreaterThanOrEqual(400);
      expect(s.out()).toMatch(/"msg":"shutting down","signal":"SIGTERM"/);
    } finally {
      if (s.child.exitCode === null) s.child.kill('SIGKILL');
    }
  });

  it('writes the same members as ever, and never a key, its secret or another query member', async () => {
    const project = await makeProject();
    const { key, entry } = await createApiKey(project.apiKeysFile, 'access-log');
    const s = await serve(project);
    try {
      const ask = (authorization: string | null) =>
        fetch(`${s.url}/v1/verify?domain=Acme-Outdoor.example&api_key=${QUERY_SECRET}&key=${key}&other=${OTHER_MEMBER}`, {
          headers: authorization ? { authorization } : {},
        });
      expect((await ask(`Bearer ${key}`)).status).toBe(200);
      expect((await ask(`Bearer ${BAD_KEY}`)).status).toBe(401);
      expect((await ask(null)).status).toBe(401);
      s.child.kill('SIGTERM');
      expect(await s.exited()).toBe(0);
      const out = s.out();
      for (const needle of [
        key,
        key.split('_').slice(2).join('_'),
        BAD_KEY,
        BAD_KEY.split('_').slice(2).join('_'),
        QUERY_SECRET,
        OTHER_MEMBER,
        'authorization',
        'Bearer',
      ])
        expect(out).not.toContain(needle);
      const lines = requestLines(out);
      expect(lines).toHaveLength(3);
      expect(lines[0]).toEqual({
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        msg: 'request',
        method: 'GET',
        path: '/v1/verify',
        status: 200,
        duration_ms: expect.any(Number),
        key_id: entry.id,
        domain: 'acme-outdoor.example',
      });
      expect(lines.slice(1).map((l) => [l.status, l.key_id, l.code])).toEqual([
        [401, null, 'UNAUTHORIZED'],
        [401, null, 'UNAUTHORIZED'],
      ]);
    } finally {
      if (s.child.exitCode === null) s.child.kill('SIGKILL');
    }
  });
});
