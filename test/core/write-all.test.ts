import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';

/**
 * One write(2) may write fewer bytes than asked and say so only by its count: a file size limit or a
 * full disk met in the middle of it. writeAllSync and writeAll write on until every byte is written or
 * the next write fails, so a short file is an error, never a success. Run as written (the built
 * module) in a process under `ulimit -f 1` (1,024 bytes), writing 4,096.
 */
const dir = mkdtempSync(join(tmpdir(), 'mvr-write-all-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FILES = pathToFileURL(join(ROOT, 'dist/core/files.js')).href;

function underLimit(call: string, file: string) {
  const script = `import { openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { writeAll, writeAllSync } from ${JSON.stringify(FILES)};
const bytes = Buffer.alloc(4096, 120);
try {
  ${call}
  console.log('written');
} catch (error) {
  console.log(error.code);
}`;
  const run = spawnSync('bash', ['-c', `ulimit -f 1 && exec "$0" --input-type=module -e "$1"`, process.execPath, script], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { out: run.stdout.trim(), err: run.stderr, size: statSync(join(dir, file)).size };
}

describe('writing every byte', () => {
  it('writeAllSync: a write cut short by a file size limit ends in EFBIG, not a short file taken for whole', () => {
    const r = underLimit(`writeAllSync(openSync('sync.bin', 'w'), bytes);`, 'sync.bin');
    expect(r.err).toBe('');
    expect(r).toMatchObject({ out: 'EFBIG', size: 1024 });
  });

  it('writeAll (a file handle): the same', () => {
    const r = underLimit(
      `const handle = await open('async.bin', 'w');
  try {
    await writeAll(handle, bytes);
  } finally {
    await handle.close();
  }`,
      'async.bin',
    );
    expect(r.err).toBe('');
    expect(r).toMatchObject({ out: 'EFBIG', size: 1024 });
  });
});
