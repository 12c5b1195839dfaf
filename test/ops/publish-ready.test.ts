/**
 * Both packages are ready to publish: MIT licensed (the field and the file), with repository and
 * homepage; `npm pkg fix` has nothing to fix; `npm publish --dry-run` warns about nothing in the
 * package (only that nobody is logged in, which a dry run on this machine always says); and the
 * version lives in package.json alone.
 */
import { execFile } from 'node:child_process';
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, removeTempDirs, tempDir } from '../support/project.ts';

const run = promisify(execFile);
afterAll(removeTempDirs);

const PACKAGES = [ROOT, join(ROOT, 'packages/verifier')];
const manifest = async (dir: string) =>
  JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Record<string, unknown> & { name: string; version: string };

// npm runs (pkg fix, publish --dry-run) in folders of their own, side by side.
describe.concurrent.each(PACKAGES)('the package in %s', (dir) => {
  it('is MIT licensed, in package.json and in a LICENSE file, and names its repository and homepage', async () => {
    const pkg = await manifest(dir);
    expect(pkg.license).toBe('MIT');
    expect(await readFile(join(dir, 'LICENSE'), 'utf8')).toMatch(
      /^MIT License\n\nCopyright \(c\) \d{4} .+\n[\s\S]*THE SOFTWARE IS PROVIDED "AS IS"/,
    );
    expect(pkg.repository).toMatchObject({ type: 'git', url: expect.stringMatching(/^git\+https:\/\/.+\.git$/) });
    expect(URL.canParse(pkg.homepage as string)).toBe(true);
  });

  it('has nothing for `npm pkg fix` to fix', async () => {
    const copy = await tempDir('mvr-pkg-fix-');
    await copyFile(join(dir, 'package.json'), join(copy, 'package.json'));
    await run('npm', ['pkg', 'fix'], { cwd: copy });
    expect(await readFile(join(copy, 'package.json'), 'utf8')).toBe(await readFile(join(dir, 'package.json'), 'utf8'));
  });

  it('publishes (dry run) without a warning about the package', async () => {
    // --ignore-scripts: `npm test` compiled dist/ already; compiling again would rewrite it under other tests.
    const { stderr } = await run('npm', ['publish', '--dry-run', '--ignore-scripts', '--no-workspaces'], {
      cwd: dir,
      env: { ...process.env, NPM_CONFIG_UPDATE_NOTIFIER: 'false' },
    });
    const warnings = stderr.split('\n').filter((l) => /^npm warn/i.test(l) && !/requires you to be logged in/.test(l));
    expect(warnings).toEqual([]);
    expect(stderr).toMatch(/npm notice [\d.]+k?B LICENSE/);
  });
});

describe('the version', () => {
  it('is written in package.json only: no source file carries it (the CLI and the MCP server read it)', async () => {
    const { version } = await manifest(ROOT);
    const found: string[] = [];
    for (const folder of [
      'packages/shared/src',
      'packages/verifier/src',
      'core',
      'storage',
      'service',
      'access',
      'keyring',
      'builder',
      'cli',
      'gateway',
      'mcp',
      'presentation',
      'clients',
      'mirror',
      'bin',
    ]) {
      for (const entry of await readdir(join(ROOT, folder), { recursive: true, withFileTypes: true })) {
        if (!entry.isFile() || !['.ts', '.js', '.mjs'].includes(extname(entry.name))) continue;
        const path = join(entry.parentPath, entry.name);
        if ((await readFile(path, 'utf8')).includes(`'${version}'`)) found.push(path);
      }
    }
    expect(found).toEqual([]);
  });
});
