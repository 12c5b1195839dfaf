/**
 * docs/local-bucket.md works as written: its shell blocks, in order, are the server's start line
 * (run as is, `npm run s3:local`, on a free port and a folder of the test's), the variables it
 * prints (which must be the block's lines), a build and a publish to the bucket, a gateway on the
 * bucket, and a curl that must answer the signed record. Adaptations: `npx mvr` is the checkout's
 * bin run in a temp project (so the checkout's own keys/, records/ and public/ are never touched),
 * and the ports are free ones (the server's flag, the gateway's PORT).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.ts';
import { freePort } from '../support/ports.ts';
import { makeProject, ROOT, removeTempDirs, tempDir } from '../support/project.ts';
import { waitFor, waitForClose } from '../support/wait.ts';

const started: ChildProcess[] = [];
afterAll(async () => {
  const running = started.filter((child) => child.exitCode === null && child.signalCode === null);
  const closed = running.map((child) => waitForClose(child, 'a long-running line of the page'));
  // Each was started as a process group of its own: npm does not pass a signal on to the script it runs.
  for (const child of running) process.kill(-child.pid!, 'SIGTERM');
  await Promise.all(closed);
  await removeTempDirs();
});

/** The page's ```sh blocks, each as its lines (blank ones left out). */
const blocks = [...readFileSync(join(ROOT, 'docs/local-bucket.md'), 'utf8').matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map(([, body]) =>
  body!.split('\n').filter((l) => l.trim() !== ''),
);

/** Runs `script` in bash; for a line that serves until stopped, resolves once `ready` matches its output. */
function run(script: string, cwd: string, env: Record<string, string>, ready?: RegExp) {
  const child = spawn('bash', ['-c', `set -e -o pipefail\n${script}`], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: !!ready });
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out.stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (out.stderr += s));
  if (!ready) return waitForClose(child, script, () => out.stderr).then(({ code }) => ({ code, ...out }));
  started.push(child);
  return waitFor(() => ready.test(out.stdout + out.stderr), script, 30_000).then(() => ({ code: null, ...out }));
}

describe('docs/local-bucket.md', () => {
  it('has the five blocks the recipe is', () => {
    expect(blocks.map((b) => b[0])).toEqual([
      'npm run s3:local',
      expect.stringMatching(/^export AWS_/),
      'npx mvr build',
      expect.stringMatching(/^npx mvr serve --records s3:\/\/mvr-local\//),
      expect.stringMatching(/^KEY=\$\(npx mvr apikey create /),
    ]);
  });

  it('runs as written against the local bucket: publish, serve from it, a verified record', async () => {
    const [[start], exports, publish, [serve], [newKey, curl]] = blocks as [[string], string[], string[], [string], [string, string]];
    const project = await makeProject();
    const s3Port = await freePort(),
      gatewayPort = await freePort();
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NPM_CONFIG_UPDATE_NOTIFIER: 'false',
    };
    const s3 = await run(`exec ${start} -- --port ${s3Port} --dir ${await tempDir('mvr-s3-local-')}`, ROOT, env, /AWS_ENDPOINT_URL_S3=/);
    // The page's variables are what the server prints (the port aside).
    const printed = s3.stdout.split('\n').filter((l) => l.startsWith('export '));
    expect(exports.map((l) => l.replace(':4569', `:${s3Port}`))).toEqual(printed);
    const inProject = (lines: string[]) =>
      [...printed, ...lines].map((l) => l.replaceAll('npx mvr ', `node ${BIN} `).replaceAll(':8787', `:${gatewayPort}`)).join('\n');
    const published = await run(inProject(publish), project.root, env);
    expect(published.code, published.stderr).toBe(0);
    await run(inProject([`exec ${serve}`]), project.root, { ...env, PORT: String(gatewayPort) }, /listening/);
    const made = await run(inProject([newKey, 'echo "$KEY"']), project.root, env);
    expect(made.code, made.stderr).toBe(0);
    const key = made.stdout.trim();
    // The gateway reads the key file anew every 250 ms: the curl is asked again until the key is seen.
    let answer: { status?: number; domain?: string } = {};
    await waitFor(async () => {
      const res = await run(inProject([`KEY=${key}`, curl]), project.root, env);
      expect(res.code, res.stderr).toBe(0);
      answer = JSON.parse(res.stdout) as typeof answer;
      return answer.status !== 401;
    }, 'the new API key to be seen by the gateway');
    expect(answer).toMatchObject({ domain: 'acme-outdoor.example', status: 'verified', signature: expect.any(String) });
  });
});
