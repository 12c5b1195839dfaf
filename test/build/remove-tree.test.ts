/**
 * Removing a build (pruning old ones, discarding a failed staging folder) must not cost memory
 * in proportion to the number of records: fs.rm with `recursive` held about 1.9 GB for a
 * million-record build. removeTree streams each folder's entries instead.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTree } from '../../builder/publish.ts';
import { ROOT, removeTempDirs, tempDir } from './helpers.ts';

afterAll(removeTempDirs);
const run = promisify(execFile);

/** A build-shaped tree: 256 shard folders holding `files` small files in all. */
function makeTree(dir: string, files: number): void {
  for (let i = 0; i < 256; i++) mkdirSync(join(dir, i.toString(16).padStart(2, '0')), { recursive: true });
  const data = 'x'.repeat(700);
  for (let i = 0; i < files; i++) writeFileSync(join(dir, (i % 256).toString(16).padStart(2, '0'), `m${i}.example.json`), data);
}

/** Peak resident memory (VmHWM, MB) of a fresh process that removes `dir` one way or the other. */
async function peakWhileRemoving(dir: string, how: 'fs.rm' | 'removeTree'): Promise<number> {
  const code =
    how === 'fs.rm'
      ? `await (await import('node:fs/promises')).rm(${JSON.stringify(dir)}, { recursive: true, force: true });`
      : `await (await import(${JSON.stringify(join(ROOT, 'builder/publish.ts'))})).removeTree(${JSON.stringify(dir)});`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `${code}\nconst s = (await import('node:fs')).readFileSync('/proc/self/status', 'utf8');\nconsole.log(/VmHWM:\\s+(\\d+)/.exec(s)[1]);`], { cwd: ROOT });
  expect(existsSync(dir)).toBe(false);
  return Number(stdout.trim()) / 1024;
}

describe('removeTree', () => {
  it('removes nested folders and files, removes symlinks without following them, and ignores a missing path', async () => {
    const base = await tempDir('mvr-remove-');
    const outside = join(base, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep.txt'), 'keep');
    const tree = join(base, 'tree');
    mkdirSync(join(tree, 'a/b/c'), { recursive: true });
    writeFileSync(join(tree, 'a/one.json'), '1');
    writeFileSync(join(tree, 'a/b/c/two.json'), '2');
    symlinkSync(outside, join(tree, 'a/link-to-outside'), 'dir');
    symlinkSync(join(outside, 'keep.txt'), join(tree, 'file-link'));
    await removeTree(tree);
    expect(existsSync(tree)).toBe(false);
    expect(readdirSync(outside)).toEqual(['keep.txt']);
    await removeTree(tree); // already gone: not an error
    await removeTree(join(base, 'never-was'));
    writeFileSync(join(base, 'plain-file'), 'x');
    await removeTree(join(base, 'plain-file'));
    expect(existsSync(join(base, 'plain-file'))).toBe(false);
  });

  it('holds far less memory than fs.rm on a build-shaped tree of 60,000 files', async () => {
    const base = await tempDir('mvr-remove-mem-');
    makeTree(join(base, 'one'), 60_000);
    makeTree(join(base, 'two'), 60_000);
    const withRm = await peakWhileRemoving(join(base, 'one'), 'fs.rm');
    const withRemoveTree = await peakWhileRemoving(join(base, 'two'), 'removeTree');
    console.info(`peak RSS removing 60,000 files: fs.rm ${withRm.toFixed(0)} MB, removeTree ${withRemoveTree.toFixed(0)} MB`);
    expect(withRemoveTree).toBeLessThan(withRm - 40);
  }, 120_000);
});
