/**
 * The real CLI for tests, with an environment that cannot change what it does (no MVR_*,
 * SOURCE_DATE_EPOCH, NODE_OPTIONS or vitest variables; no colour), in the project root.
 * {@link runCli} runs a command in this process through the CLI's own entry point (`runMvr`,
 * which the bin calls with the process's streams), its output captured as from pipes;
 * {@link spawnCli} runs `node bin/mvr.js` as a child, for what only a process shows: signals, the
 * bin itself, a working folder of its own, libraries that read the process's own environment.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { runMvr } from '../../cli/mvr.ts';
import { NOW_ISO, type Project, ROOT } from './project.ts';
import { settleWithin, waitForClose } from './wait.ts';

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
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** How long a CLI run may take before the test fails, naming it (under the test's own time-out). */
const RUN_LIMIT_MS = 50_000;

/**
 * Runs `mvr ...args` in this process, as the bin would in the project root; resolves with the
 * exit code and the output, never rejects on a non-zero exit. A run still going after
 * {@link RUN_LIMIT_MS} fails the test with the end of its stderr (it cannot be killed, unlike a
 * child). Runs side by side share nothing: each has its own environment and output.
 */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  // Relative paths resolve against the process's working folder, which the child's was.
  if (resolve(process.cwd()) !== resolve(ROOT)) throw new Error(`runCli: the tests run in ${ROOT}, not ${process.cwd()}`);
  let stdout = '',
    stderr = '';
  const io = {
    env: cliEnv(env),
    stdout: { isTTY: false, write: (s: string) => (stdout += s) },
    stderr: { isTTY: false, write: (s: string) => (stderr += s) },
  };
  const code = await settleWithin(runMvr(args, io), `mvr ${args.join(' ')}`, () => stderr, RUN_LIMIT_MS);
  return { code, signal: null, stdout, stderr };
}

/**
 * Runs `node bin/mvr.js ...args` in a child process (in `cwd`, default the project root);
 * resolves with the exit code (or signal) and output, never rejects on a non-zero exit (a run
 * that hangs fails, killed, with its stderr). `onSpawn` gets the child (to signal it).
 */
export async function spawnCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  { onSpawn, cwd = ROOT }: { onSpawn?: (child: ChildProcess) => void; cwd?: string } = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '',
    stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  onSpawn?.(child);
  const { code, signal } = await waitForClose(child, `mvr ${args.join(' ')}`, () => stderr, RUN_LIMIT_MS);
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
