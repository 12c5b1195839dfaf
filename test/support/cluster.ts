/**
 * A gateway cluster for the tests past one machine: `mvr serve --workers 3` as a child process on
 * a bucket and a Redis, and ways to ask it on new connections (node:cluster hands each to the
 * processes in turn).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { get } from 'node:http';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { ROOT } from './project.ts';
import { poll, sleep, waitForExit } from './wait.ts';

/** Where a cluster keeps its records and rate counts, the key set it trusts, and the list its child processes join (to be killed after). */
export interface ClusterSetting {
  records: string;
  /** The published key set file, as `--trusted-keys` (a bucket's own key set chooses no key). */
  trustedKeys: string;
  redisUrl: string;
  env: Record<string, string>;
  children: ChildProcess[];
}

export const startGatewayCluster = async (at: ClusterSetting, rateLimit: number) => {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/mvr.js'),
      'serve',
      '--quiet',
      '--workers',
      '3',
      '--port',
      String(port),
      '--records',
      at.records,
      '--trusted-keys',
      at.trustedKeys,
      '--redis',
      at.redisUrl,
      '--rate-limit',
      String(rateLimit),
      '--unauth-rate-limit',
      '0',
    ],
    {
      // 10 s per store request: on a loaded 2-core machine the S3 test server can take over the default 2 s, and a
      // gateway that cannot confirm its build answers 503 (as it must); an outage is a refused connection.
      env: { PATH: process.env.PATH ?? '', MVR_STORE_TIMEOUT_MS: '10000', ...at.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  at.children.push(child);
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  // A bound, not a wait: three processes start in about a second, far slower on a machine under load.
  const deadline = Date.now() + 45_000;
  while ((log.match(/"msg":"listening"/g) ?? []).length < 3) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the cluster did not come up:\n${log}`);
    await sleep(50);
  }
  return { url, child, log: () => log };
};
export const stopCluster = async (child: ChildProcess) => {
  child.kill('SIGTERM');
  await waitForExit(child, 'a gateway of the cluster after SIGTERM');
};
const askOnNewConnection = (url: string, domain: string, key: string) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    get(`${url}/v1/verify?domain=${domain}`, { agent: false, headers: { authorization: `Bearer ${key}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (s: string) => (text += s));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    }).on('error', reject);
  });
/**
 * Asks on new connections until `rounds` answers in a row pass `ok` (node:cluster hands new
 * connections to the processes in turn, so six in a row cover each of the three twice). An
 * assertion: when that does not happen within 10 s, the test fails showing the last answer that did not pass.
 */
export const untilEveryProcess = async (
  url: string,
  domain: string,
  key: string,
  ok: (r: { status: number; text: string }) => boolean,
  rounds = 6,
): Promise<void> => {
  await poll(
    async () => {
      for (let i = 0; i < rounds; i++) {
        const answer = await askOnNewConnection(url, domain, key);
        if (!ok(answer)) return answer;
      }
      return null;
    },
    (notYet) => notYet === null,
    { timeoutMs: 10_000, intervalMs: 50 },
  );
};
export const ask = async (url: string, domain: string, key: string) => {
  const res = await fetch(`${url}/v1/verify?domain=${domain}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, text: await res.text(), at: performance.now() };
};
