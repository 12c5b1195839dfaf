/**
 * `mvr init DIR`: a project of one's own, made as a new user would make it, in an empty temp
 * folder; then built with the real `mvr build` (its own keys, its audits dated by init), served by a
 * real gateway and verified with `mvr verify`, keys and log pinned from the project's files. The
 * scaffolded workflow is linted by actionlint and may not use what only a clone has.
 */
import { execFile } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KEY_SET_PATH, parsePolicy } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_VKEY_PATH } from '../../core/layout.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { camelCaseInOutput } from '../support/json-members.ts';
import { type Project, ROOT, removeTempDirs, tempDir } from '../support/project.ts';
import { lint, loadWorkflow } from '../support/workflow.ts';

const WORKFLOW = '.github/workflows/monthly-rebuild.yml';

let dir: string;
let made: { ok: boolean; files: string[]; signing_kid: string; log_vkey: string; audits: number };
let progress: Record<string, unknown>[];
beforeAll(async () => {
  dir = join(await tempDir('mvr-init-'), 'my-shop');
  const run = await runCli(['init', dir, '--json']);
  expect(run.code, run.stderr).toBe(0);
  expect(camelCaseInOutput(run)).toEqual([]);
  made = JSON.parse(run.stdout) as typeof made;
  progress = run.stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
});
afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

describe('mvr init', () => {
  it('makes exactly the listed files, the keys 0600, a policy with the log line filled in', async () => {
    expect(made.ok).toBe(true);
    expect(made.audits).toBe(3);
    // Progress as build and publish print it with --json: a JSON object a line on stderr, the last one done.
    expect(progress.map((p) => p.step ?? null)).toEqual(['audits', 'keys', 'files', 'done']);
    expect(progress.at(-1)).toMatchObject({ progress: 'init', done: true, files: made.files.length });
    expect(made.files).toEqual([
      WORKFLOW,
      '.gitignore',
      'README.md',
      'audits/flagged.json',
      'audits/provisional.json',
      'audits/verified.json',
      'keys/active',
      'keys/log.key',
      `keys/signing/${made.signing_kid}.jwk.json`,
      'witnesses.policy',
    ]);
    for (const key of ['keys/log.key', `keys/signing/${made.signing_kid}.jwk.json`])
      expect((await stat(join(dir, key))).mode & 0o777, key).toBe(0o600);
    const policyText = await readFile(join(dir, 'witnesses.policy'), 'utf8');
    const policy = parsePolicy(policyText, 'witnesses.policy');
    expect(policy.logs.map((l) => l.vkey.name)).toEqual(['merchant-verify.example/log']);
    expect(policyText).toContain(`\nlog ${made.log_vkey}\n`);
    expect(policyText).toMatch(/^# witness /m);
    const ignored = (await readFile(join(dir, '.gitignore'), 'utf8')).split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['keys/', 'records/']));
  });

  it('says how the project gets mvr: from the clone it was made from, by its path (the package is not on npm yet)', async () => {
    const run = await runCli(['init', join(await tempDir('mvr-init-'), 'shop')]);
    expect(run.code, run.stderr).toBe(0);
    // The done line says what was made, not the last step again.
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^init: done, 10 files written \(\d+ s\)$/);
    const install = run.stdout.split('\n').find((l) => l.trim().startsWith('npm install'));
    expect(install?.trim().startsWith(`npm install --ignore-scripts ${ROOT.replace(/\/$/, '')} `), install).toBe(true);
  });

  it('refuses a folder that is not empty (usage error, exit 2, naming it) and changes nothing in it', async () => {
    const before = await readFile(join(dir, 'keys/log.key'), 'utf8');
    const again = await runCli(['init', dir, '--json']);
    expect(again.code).toBe(2);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: false, code: 'INVALID_USAGE', message: expect.stringContaining(dir) });
    expect(await readFile(join(dir, 'keys/log.key'), 'utf8')).toBe(before);
    const file = join(await tempDir('mvr-init-file-'), 'a-file');
    await writeFile(file, '');
    expect((await runCli(['init', file])).code).toBe(2);
  });

  it('builds as it is, serves one record of each status, and the record verifies with the keys pinned from its files', async () => {
    const project: Project = {
      root: dir,
      auditsDir: join(dir, 'audits'),
      recordsDir: join(dir, 'records'),
      publicDir: join(dir, 'public'),
      keysDir: join(dir, 'keys'),
      apiKeysFile: join(dir, 'keys/api-keys.json'),
      keySetFile: join(dir, 'public', KEY_SET_PATH),
      kid: made.signing_kid,
    };
    // No --now: the audits init dated relative to today must pass the build's "not in the future" rule today.
    const build = await runCli(buildArgs(project, ['--json'], null));
    expect(build.code, build.stderr).toBe(0);
    const gw = await startTestGateway(project);
    for (const [domain, status] of [
      ['your-shop.example', 'verified'],
      ['thin-evidence.example', 'provisional'],
      ['flagged-shop.example', 'flagged'],
    ]) {
      const reply = await gw.verify(domain!);
      expect(reply.status, domain).toBe(200);
      expect(reply.json, domain).toMatchObject({ domain, status });
    }
    const verify = await runCli([
      'verify',
      'your-shop.example',
      '--base-url',
      gw.url,
      '--api-key',
      gw.key,
      '--trusted-keys',
      project.keySetFile,
      '--log-key',
      join(project.publicDir, LOG_VKEY_PATH),
      '--json',
    ]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ valid: true });
  });

  it('writes a monthly workflow that actionlint accepts and that runs mvr from the installed package, never from a clone', async () => {
    const file = join(dir, WORKFLOW);
    expect(await lint(file)).toEqual([]);
    const text = await readFile(file, 'utf8');
    expect(text).not.toMatch(/bin\/mvr\.js|scripts\/ci\/|npm run build/);
    expect(Object.keys(loadWorkflow(file).jobs)).toEqual(['build', 'publish', 'witness']);
  });

  it('ships its templates in the packed package (what `npx --package merchant-verify-<version>.tgz mvr init` reads)', async () => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT });
    const packed = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    expect(packed).toEqual(
      expect.arrayContaining([
        'templates/init/README.md',
        'templates/init/gitignore',
        'templates/init/monthly-rebuild.yml',
        'templates/init/audits/verified.json',
        'templates/init/audits/provisional.json',
        'templates/init/audits/flagged.json',
        'dist/cli/commands/init.js',
      ]),
    );
  });
});
