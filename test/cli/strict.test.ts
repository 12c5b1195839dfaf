/**
 * The command line as a user meets it, through pipes (never a TTY): what the CLI does not know it
 * refuses with exit 2 (INVALID_USAGE, from the error registry) naming it, before it touches
 * anything; `--version` works everywhere; help has no escape codes in a pipe, fits 80 columns,
 * and each command lists its own options only.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { colourEnabled } from '../../cli/colour.ts';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { type CliResult, runCli, spawnCli } from '../support/cli.ts';
import { ROOT, removeTempDirs, tempDir } from '../support/project.ts';

afterAll(removeTempDirs);

const VERSION = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const USAGE_EXIT = exitCodeOf('INVALID_USAGE');

/**
 * `mvr ...args` with stdout and stderr to pipes and colour as the environment leaves it: in this
 * process, or with `cwd` as a process of its own in that folder (the test checks it wrote nothing there).
 */
function mvr(args: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<CliResult> {
  const env = { NO_COLOR: undefined, FORCE_COLOR: undefined, ...opts.env };
  return opts.cwd ? spawnCli(args, env, { cwd: opts.cwd }) : runCli(args, env);
}

/**
 * `mvr ...path --help` (colour as the environment leaves it), run once per path for the file: the
 * listing of commands, the 80-column check and the own-options check read the same runs.
 */
const helps = new Map<string, Promise<CliResult>>();
function help(path: string[]): Promise<CliResult> {
  const key = path.join(' ');
  if (!helps.has(key)) helps.set(key, mvr([...path, '--help']));
  return helps.get(key)!;
}

/** Every command and subcommand, as `mvr --help` and the groups' help list them; and the groups. */
async function allCommands(): Promise<{ commands: string[][]; groups: string[][] }> {
  const names = (help: string) => [...help.slice(help.indexOf('Commands:')).matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]!);
  const listed = await Promise.all(
    names((await help([])).stdout).map(async (name) => {
      const text = (await help([name])).stdout;
      return text.includes('Commands:') ? { group: [name], commands: names(text).map((sub) => [name, sub]) } : { commands: [[name]] };
    }),
  );
  return { commands: listed.flatMap((l) => l.commands), groups: listed.flatMap((l) => (l.group ? [l.group] : [])) };
}

// Each test makes its own CLI runs (in folders of its own); they run side by side.
describe.concurrent('a strict command line', () => {
  it('the usage exit code comes from the error registry and is 2', () => {
    expect(USAGE_EXIT).toBe(2);
  });

  it('refuses an unknown flag with exit 2, naming it and the close match, and writes nothing', async () => {
    const dir = await tempDir('mvr-strict-');
    const r = await mvr(['build', '--recrods', join(dir, 'x')], { cwd: dir });
    expect(r.code).toBe(USAGE_EXIT);
    expect(r.stderr).toMatch(/unknown option --recrods \(did you mean --records\?\)/);
    expect(r.stdout).toBe('');
    expect(await readdir(dir)).toEqual([]);
  });

  it.each([
    [['biuld'], /unknown command "biuld" \(did you mean build\?\)/],
    [['apikey', 'craete'], /apikey: unknown command "craete" \(did you mean create\?\)/],
    [['frobnicate'], /unknown command "frobnicate"; see "mvr --help"/],
    [[], /a command is required/],
    [['apikey', 'create'], /--label is required/],
    [['build', '--json=yes'], /--json takes no value/],
    [['build', '--records'], /--records needs a value/],
    [['build', '--records', '--json'], /--records/],
    [['verify', 'a.example', 'b.example'], /unexpected argument "b\.example"/],
    [['serve', '-x'], /unknown option -x/],
    [['--port', '1'], /unknown option --port/],
  ])('mvr %j is a usage error (exit 2) naming what is wrong', async (args, message) => {
    const r = await mvr(args);
    expect(r.code, r.stderr).toBe(USAGE_EXIT);
    expect(r.stderr).toMatch(/^mvr: INVALID_USAGE: /m);
    expect(r.stderr).toMatch(message);
  });

  it('prints the version of package.json for mvr and every command, and runs nothing', async () => {
    const dir = await tempDir('mvr-version-');
    const runs = [
      ['--version'],
      ['build', '--version'],
      ['apikey', 'create', '--version'],
      ['serve', '--version'],
      ['dev', '--version'],
      ['log', '--version'],
    ];
    for (const [args, r] of await Promise.all(runs.map(async (args) => [args, await mvr(args, { cwd: dir })] as const))) {
      expect(r, args.join(' ')).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
    }
    expect(await readdir(dir)).toEqual([]);
  });

  it('help in a pipe: no escape codes, at most 80 columns, exit 0', async () => {
    const { commands, groups } = await allCommands();
    expect(commands.length).toBeGreaterThanOrEqual(14);
    expect(groups.length).toBeGreaterThanOrEqual(2);
    // The groups' own help too.
    const paths = [[], ...groups, ...commands];
    const runs = await Promise.all(paths.map(async (path) => ({ path, r: await help(path) })));
    for (const { path, r } of runs) {
      expect(r.code, path.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage: mvr/);
      expect(r.stdout).not.toMatch(/\x1b/);
      for (const line of r.stdout.split('\n')) expect(line.length, `${path.join(' ')}: ${line}`).toBeLessThanOrEqual(80);
    }
  }, 180_000);

  it("each command's help lists its own options, with its own descriptions", async () => {
    const build = (await help(['build'])).stdout;
    expect(build).toMatch(/--workers WORKERS\n {6}worker threads/);
    expect(build).not.toMatch(/--port|gateway processes|origin URL/);
    const serve = (await help(['serve'])).stdout;
    expect(serve).toMatch(/--workers WORKERS\n {6}gateway processes sharing the port/);
    expect(serve).not.toMatch(/worker threads|--audits|--allow-empty/);
    expect((await help(['apikey', 'revoke'])).stdout).toMatch(
      /^Usage: mvr apikey revoke ID \[options\]\n[\s\S]*Arguments:\n {2}ID\n {6}key id/,
    );
    const publish = (await help(['publish'])).stdout;
    expect(publish).toMatch(/--to TO/);
    expect(publish).not.toMatch(/--port|--audits|s3:\/\/BUCKET\/PREFIX, or an http/);
  });

  it('colours help only when asked to (FORCE_COLOR), even into a pipe; NO_COLOR wins over a terminal', async () => {
    expect((await mvr(['--help'], { env: { FORCE_COLOR: '1' } })).stdout).toMatch(/\x1b\[1m/);
    expect((await mvr(['--help'], { env: { FORCE_COLOR: '0' } })).stdout).not.toMatch(/\x1b/);
    expect(colourEnabled({ isTTY: true }, {})).toBe(true);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colourEnabled({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(colourEnabled({ isTTY: false }, { NO_COLOR: '1', FORCE_COLOR: '1' })).toBe(true);
    expect(colourEnabled({ isTTY: false }, {})).toBe(false);
  });
});
