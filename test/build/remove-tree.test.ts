/**
 * Removing a build (pruning old ones, discarding a failed staging folder) must not cost memory
 * in proportion to the number of records: fs.rm with `recursive` held about 1.9 GB for a
 * million-record build. removeTree streams each folder's entries instead; its memory beside
 * fs.rm's is measured by `npm run bench:remove-tree`, not asserted here.
 */
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTree } from '../../builder/swap.ts';
import { removeTempDirs, tempDir } from '../support/project.ts';

afterAll(removeTempDirs);

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

  it('gives the event loop a turn between folders, so a gateway or a progress line is not held up', async () => {
    const tree = join(await tempDir('mvr-remove-turns-'), 'build');
    for (let i = 0; i < 64; i++) {
      mkdirSync(join(tree, i.toString(16).padStart(2, '0')), { recursive: true });
      writeFileSync(join(tree, i.toString(16).padStart(2, '0'), 'r.json'), '{}');
    }
    // Counts the turns the event loop had while removeTree ran (a synchronous walk gives none).
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await removeTree(tree);
    ticking = false;
    expect(existsSync(tree)).toBe(false);
    expect(turns).toBeGreaterThanOrEqual(64);
  });
});
