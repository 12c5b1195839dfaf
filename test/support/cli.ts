/**
 * The real CLI for tests: `node bin/mvr.js ...` in a child process, in the project root, with an
 * environment that cannot change what it does (no MVR_* but MVR_WORKERS=1, no SOURCE_DATE_EPOCH,
 * NODE_OPTIONS or vitest variables; no colour).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { NOW_ISO, type Project, ROOT } from './project.ts';
import { waitForClose } from './wait.ts';

export const BIN = join(ROOT, 'bin', 'mvr.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** This process's environment without what would change a CLI run, plus `extra` (an undefined value removes a name). */
export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('MVR_') || name.startsWith('VITEST') || name === 'SOURCE_DATE_EPOCH' || name === 'NODE_OPTIONS') continue;
    env[name] = value;
  }
  env.NO_COLOR = '1';
  // One build worker thread, as the in-process builds use (test/support/project.ts): each thread
  // costs a quarter second of start-up, and the default (cores + 1) is the scheduling tests' business.
  env.MVR_WORKERS = '1';
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/**
 * Runs `node bin/mvr.js ...args` in the project root; resolves with the exit code (or signal)
 * and output, never rejects on a non-zero exit (a run that hangs fails, killed, with its stderr).
 * `onSpawn` gets the child (to signal it).
 */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  onSpawn?: (child: ChildProcess) => void,
): Promise<CliResult> {
  const child = spawn(process.execPath, ['bin/mvr.js', ...args], { cwd: ROOT, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '',
    stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  onSpawn?.(child);
  const { code, signal } = await waitForClose(child, `mvr ${args.join(' ')}`, () => stderr);
  return { code, signal, stdout, stderr };
}

/** `build` flags for a project (folders and --now), plus `extra`. */
export function buildArgs(
  p: Pick<Project, 'auditsDir' | 'recordsDir' | 'publicDir' | 'keysDir'>,
  extra: string[] = [],
  now: string | null = NOW_ISO,
): string[] {
  const args = ['build', '--audits', p.auditsDir, '--records', p.recordsDir, '--public', p.publicDir, '--keys', p.keysDir];
  if (now !== null) args.push('--now', now);
  return [...args, ...extra];
}

/** Lines of a text, without the empty last one. */
export function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}
