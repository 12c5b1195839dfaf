/**
 * The CLI's one entry point, from both sides. As a process (`node bin/mvr.js`, output to pipes):
 * the exit code of a success, a usage error and a typed error, `--json` on a pipe, and a checkout
 * without dist/. In this process (how most tests run commands): the same output and exit code as
 * the process gives, and the process left as it was (no exit code set, no signal handler left).
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { buildArgs, runCli, spawnCli } from '../support/cli.ts';
import { makeProject, ROOT, removeTempDirs, tempDir } from '../support/project.ts';
import { waitForClose } from '../support/wait.ts';

afterAll(removeTempDirs);

const README = join(ROOT, 'README.md');

describe('mvr as a process', () => {
  it('a success exits 0; with --json its one line on stdout parses, into a pipe', async () => {
    const keys = await tempDir('mvr-bin-');
    const r = await spawnCli(['keygen', '--keys', keys, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ kid: expect.any(String), keys_dir: keys });
    expect(r.stdout.endsWith('}\n')).toBe(true);
  });

  it('a usage error exits 2 and a typed error exits with its code from the registry, with --json on stdout', async () => {
    const usage = await spawnCli(['biuld']);
    expect(usage).toMatchObject({ code: exitCodeOf('INVALID_USAGE'), signal: null, stdout: '' });
    expect(usage.stderr).toMatch(/^mvr: INVALID_USAGE: unknown command "biuld" \(did you mean build\?\)/);

    const nothing = await tempDir('mvr-bin-');
    const typed = await spawnCli(['log', 'check', '--checkpoint', README, '--public', nothing, '--json']);
    expect(typed.code, typed.stderr).toBe(exitCodeOf('FETCH_FAILED'));
    expect(JSON.parse(typed.stdout)).toMatchObject({ ok: false, code: 'FETCH_FAILED' });
  });

  it('in a checkout without dist/ the bin says to build first (exit 2)', async () => {
    const checkout = await tempDir('mvr-no-dist-');
    await mkdir(join(checkout, 'bin'));
    await copyFile(join(ROOT, 'bin', 'mvr.js'), join(checkout, 'bin', 'mvr.js'));
    const child = spawn(process.execPath, [join(checkout, 'bin', 'mvr.js'), '--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const { code } = await waitForClose(child, 'mvr without dist/', () => stderr);
    expect(code).toBe(2);
    expect(stderr).toBe('mvr: dist/cli/cli.js is missing: run `npm run build` in this checkout first\n');
  });
});

describe('mvr in this process', () => {
  it('gives the same exit code and output as the process', async () => {
    const nothing = await tempDir('mvr-bin-');
    const runs = [
      ['biuld'],
      ['log', 'check', '--checkpoint', README, '--public', nothing, '--json'],
      ['apikey', 'revoke', '--help'],
      ['--version'],
    ];
    for (const args of runs) {
      const [inProcess, child] = await Promise.all([runCli(args), spawnCli(args)]);
      expect(inProcess, args.join(' ')).toEqual(child);
    }
  });

  it('leaves the process as it found it: no exit code set, no signal handler left behind', async () => {
    const state = () => ({
      exitCode: process.exitCode,
      SIGINT: process.listenerCount('SIGINT'),
      SIGTERM: process.listenerCount('SIGTERM'),
    });
    const before = state();
    const p = await makeProject({ build: false });
    const built = await runCli(buildArgs(p));
    expect(built.code, built.stderr).toBe(0);
    expect((await runCli(['biuld'])).code).toBe(exitCodeOf('INVALID_USAGE'));
    expect(state()).toEqual(before);
  });
});
