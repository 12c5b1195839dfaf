/**
 * `npm run bench:remove-tree`: peak resident memory of a fresh process removing a build-shaped
 * tree (256 shard folders) with fs.rm `recursive` and with the build's removeTree. This was an
 * assertion in the test suite; memory is a measurement, so it lives here.
 * Options: --files 60000 (files in each tree)
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';

const { values } = parseArgs({ options: { files: { type: 'string', default: '60000' } } });
const files = Number(values.files);
const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);

/** A build-shaped tree: 256 shard folders holding `count` small files in all. */
function makeTree(dir: string, count: number): void {
  for (let i = 0; i < 256; i++) mkdirSync(join(dir, i.toString(16).padStart(2, '0')), { recursive: true });
  const data = 'x'.repeat(700);
  for (let i = 0; i < count; i++) writeFileSync(join(dir, (i % 256).toString(16).padStart(2, '0'), `m${i}.example.json`), data);
}

/** Peak resident memory (VmHWM, MB) of a fresh process that removes `dir` one way or the other. */
async function peakWhileRemoving(dir: string, how: 'fs.rm' | 'removeTree'): Promise<number> {
  const code =
    how === 'fs.rm'
      ? `await (await import('node:fs/promises')).rm(${JSON.stringify(dir)}, { recursive: true, force: true });`
      : `await (await import(${JSON.stringify(join(ROOT, 'dist/builder/swap.js'))})).removeTree(${JSON.stringify(dir)});`;
  const { stdout } = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `${code}\nconst s = (await import('node:fs')).readFileSync('/proc/self/status', 'utf8');\nconsole.log(/VmHWM:\\s+(\\d+)/.exec(s)[1]);`,
    ],
    { cwd: ROOT },
  );
  if (existsSync(dir)) throw new Error(`${how} left ${dir} behind`);
  return Number(stdout.trim()) / 1024;
}

const base = mkdtempSync(join(tmpdir(), 'mvr-bench-remove-'));
try {
  makeTree(join(base, 'one'), files);
  makeTree(join(base, 'two'), files);
  const withRm = await peakWhileRemoving(join(base, 'one'), 'fs.rm');
  const withRemoveTree = await peakWhileRemoving(join(base, 'two'), 'removeTree');
  console.log(
    `peak RSS removing ${files.toLocaleString('en')} files: fs.rm ${withRm.toFixed(0)} MB, removeTree ${withRemoveTree.toFixed(0)} MB`,
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
