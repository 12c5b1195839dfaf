/**
 * docs/docker.md, read as a user types it: its commands agree with the Dockerfile (every mount is
 * a folder the image reads, made earlier in the block; what writes is not mounted read-only), and
 * run here in order without Docker (`/srv/mvr` a temporary folder, each `docker run IMAGE ARGS`
 * the image's own command with its ENV), ending with the curl line answered by the gateway.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../support/cli.ts';
import { command, finalEnv, ROOT } from '../support/dockerfile.ts';
import { removeTempDirs, tempDir } from '../support/project.ts';
import { waitFor, waitForExit } from '../support/wait.ts';

afterAll(removeTempDirs);

/** The shell block's commands: continuation lines joined, comments dropped. */
const commands = /```sh\n([\s\S]*?)```/
  .exec(readFileSync(join(ROOT, 'docs/docker.md'), 'utf8'))![1]!
  .replace(/\\\n\s*/g, '')
  .split('\n')
  .map((l) => l.replace(/\s+#.*$/, '').trim())
  .filter((l) => l && !l.startsWith('#'));

/** A `docker run`: its mounts and `-e` variables, and the arguments after the image name. */
function dockerRun(line: string) {
  const words = line
    .replace(/^(\w+=\$\()?docker run /, '')
    .replace(/\)$/, '')
    .split(/\s+/);
  const mounts: { host: string; target: string; readOnly: boolean }[] = [];
  const env: Record<string, string> = {};
  let i = 0;
  for (; i < words.length && words[i]!.startsWith('-'); i++) {
    if (words[i] === '-v') {
      const [host, target, mode] = words[++i]!.split(':');
      mounts.push({ host: host!, target: target!, readOnly: mode === 'ro' });
    } else if (words[i] === '-e') {
      const [name, value] = words[++i]!.split('=');
      env[name!] = value!;
    } else if (['-p', '--name', '--tmpfs', '--cap-drop', '--security-opt'].includes(words[i]!)) i++;
  }
  return { mounts, env, image: words[i]!, args: words.slice(i + 1) };
}

const runs = commands.filter((c) => /docker run /.test(c)).map((c) => ({ line: c, ...dockerRun(c) }));
const DATA_DIRS = [finalEnv.MVR_RECORDS_DIR!, finalEnv.MVR_PUBLIC_DIR!, dirname(finalEnv.MVR_API_KEYS_FILE!)];

describe('docs/docker.md against the Dockerfile', () => {
  it('mounts only the folders the image reads, each made earlier in the block; what writes API keys mounts them writable, the gateway read-only', () => {
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const made = commands.filter((c) => /mkdir -p /.test(c)).flatMap((c) => c.split(/\s+/).filter((w) => w.startsWith('/')));
    for (const run of runs) {
      for (const m of run.mounts) {
        expect(DATA_DIRS, run.line).toContain(m.target);
        expect(made, `${m.host} is mounted but never made`).toContain(m.host);
        expect(commands.indexOf(run.line)).toBeGreaterThan(commands.findIndex((c) => c.includes(`mkdir -p`) && c.includes(m.host)));
      }
      const writes = run.args[0] === 'apikey' && run.args[1] !== 'list';
      if (writes)
        expect(
          run.mounts.filter((m) => m.readOnly),
          run.line,
        ).toEqual([]);
    }
    const gateway = runs.find((r) => r.args.length === 0)!;
    expect(gateway.line).toContain('--read-only');
    expect(gateway.mounts.map((m) => m.target).sort()).toEqual([...DATA_DIRS].sort());
    expect(gateway.mounts.every((m) => m.readOnly)).toBe(true);
    // The node user (uid 1000) owns the API key folder it writes; the build writes records and public.
    const keysHost = gateway.mounts.find((m) => m.target === DATA_DIRS[2])!.host;
    expect(commands).toContain(`sudo chown 1000:1000 ${keysHost}`);
    const build = commands.find((c) => c.startsWith('npx mvr build '))!;
    for (const target of DATA_DIRS.slice(0, 2)) expect(build).toContain(gateway.mounts.find((m) => m.target === target)!.host);
  });

  it('run in order without Docker, the block ends with the curl line answered 200 by the gateway it started', async () => {
    const srv = await tempDir('mvr-docker-docs-');
    const keysDir = join(await tempDir('mvr-docker-docs-keys-'), 'keys');
    const host = (s: string) => s.replaceAll('/srv/mvr', srv);
    // A container path to where its host folder is, by the mounts of a docker run.
    const inContainer = (run: (typeof runs)[number]) => {
      const env: Record<string, string> = {};
      for (const [name, value] of Object.entries(finalEnv)) {
        const mount = run.mounts.find((m) => value === m.target || value.startsWith(`${m.target}/`));
        if (mount) env[name] = host(mount.host) + value.slice(mount.target.length);
      }
      return { ...env, ...run.env };
    };
    const shell: Record<string, string> = {};
    let gateway: ReturnType<typeof spawn> | null = null;
    let log = '';
    let port = '';
    try {
      for (const line of commands) {
        if (/^sudo |^docker (build|inspect) /.test(line)) continue; // folders are made below; no image to build here
        if (line.startsWith('npx mvr ')) {
          const r = await runCli(host(line).split(' ').slice(2), { MVR_KEYS_DIR: keysDir });
          expect(r.code, `${line}\n${r.stderr}`).toBe(0);
        } else if (line.startsWith('curl ')) {
          const url = /'(http[^']+)'/.exec(line)![1]!.replace(':8787', `:${port}`);
          const res = await fetch(url, { headers: { authorization: `Bearer ${shell.KEY}` } });
          expect(res.status, log).toBe(200);
        } else {
          const run = runs.find((r) => r.line === line);
          expect(run, `a command the test does not know: ${line}`).toBeDefined();
          for (const m of run!.mounts) await mkdir(host(m.host), { recursive: true });
          const argv = [...command().slice(2, -1), ...(run!.args.length ? run!.args : command().slice(-1))];
          if (run!.args.length) {
            const r = await runCli(argv, inContainer(run!));
            expect(r.code, `${line}\n${r.stderr}`).toBe(0);
            const assigned = /^(\w+)=\$\(/.exec(line);
            if (assigned) shell[assigned[1]!] = r.stdout.trim();
          } else {
            // Port 0, and the port it says it listens on: a port found free first can be taken by another test before it binds.
            gateway = spawn(process.execPath, [join(ROOT, 'bin/mvr.js'), ...argv, '--host', '127.0.0.1', '--port', '0'], {
              env: cliEnv(inContainer(run!)),
              stdio: ['ignore', 'pipe', 'pipe'],
            });
            gateway.stdout!.on('data', (s: Buffer) => (log += s));
            gateway.stderr!.on('data', (s: Buffer) => (log += s));
            await waitFor(
              async () => {
                port = /"msg":"listening","url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(log)?.[1] ?? '';
                return port !== '' && (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok === true;
              },
              'the gateway of docs/docker.md',
              30_000,
            );
          }
        }
      }
      expect(shell.KEY).toMatch(/^mvr_/);
    } finally {
      if (gateway) {
        gateway.kill('SIGTERM');
        await waitForExit(gateway, 'the gateway of docs/docker.md', () => log);
      }
    }
  });
});
