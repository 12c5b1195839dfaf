/**
 * The re-append a build signs ahead for a publish short of its quorum (decision 0094): the log's
 * last entry as the build found it, read from its edge bundle or, when the edge holds none, from
 * the last full bundle, appended after the build's entries, with a head the log key signed and
 * tiles that give its root. Without that bundle, or with one its tiles refute, nothing is signed.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatCheckpoint } from '#shared';
import { signLogIfNotLive } from '../../builder/log-if-not-live.ts';
import { openLogDir, tileWriter } from '../../builder/published-log.ts';
import { hasher, sha256 } from '../../core/crypto/hash.ts';
import { TileAppender } from '../../core/tlog/appender.ts';
import { TileTree } from '../../core/tlog/tile-tree.ts';
import { tilePath } from '../../core/tlog/tiles.ts';
import { generateLogKeyText, openCheckpoint, parseLogKey, signNote } from '../../keyring/log-key.ts';
import { folderTiles } from '../../storage/log-tiles.ts';
import { removeTempDirs, tempDir } from '../support/project.ts';

afterAll(removeTempDirs);

const key = parseLogKey(generateLogKeyText('shop.example/log'), 'test');
const entry = (i: number) => sha256(Buffer.from(`entry ${i}`));

/** A published log of `size` entries, then a build's three more appended; the log as the build found it and the build's checkpoint. */
async function logAndBuild(size: number) {
  const dir = await tempDir();
  const logDir = join(dir, 'log');
  const buildDir = join(dir, 'build');
  await mkdir(buildDir, { recursive: true });
  const append = async (from: Awaited<ReturnType<typeof openLogDir>>['edge'], first: number, count: number) => {
    const appender = new TileAppender(hasher, from, tileWriter(logDir, new Set()));
    for (let i = first; i < first + count; i++) appender.append(entry(i));
    appender.finish();
    const root = await new TileTree(hasher, appender.size, folderTiles(logDir)).root();
    return { origin: key.name, size: appender.size, root };
  };
  const published = await append({ size: 0, levels: [], entries: [] }, 0, size);
  await writeFile(join(logDir, 'checkpoint'), signNote(key, formatCheckpoint(published)));
  return {
    logDir,
    buildDir,
    size,
    found: await openLogDir(logDir, key, key.name),
    next: (found: Awaited<ReturnType<typeof openLogDir>>) => append(found.edge, size, 3),
  };
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const signed = (buildDir: string) => join(buildDir, 'log-if-not-live');

describe('the log a build leaves if it does not go live', () => {
  for (const size of [255, 256, 257]) {
    it(`appends the log's last entry again after the build's (log of ${size} entries)`, async () => {
      const l = await logAndBuild(size);
      const built = await l.next(l.found);
      await signLogIfNotLive(l.found, built, l.buildDir, key);
      const head = openCheckpoint(await readFile(join(signed(l.buildDir), 'checkpoint'), 'utf8'), key.verifierKey, 'the head');
      expect(head.size).toBe(size + 4);
      const tree = new TileTree(hasher, head.size, (_t, path) =>
        readFile(join(signed(l.buildDir), path)).catch(() => readFile(join(l.logDir, path))),
      );
      expect(hex(await tree.root())).toBe(hex(head.root));
      expect(await tree.extends(built, head.root)).toBe(true);
      expect(hex((await tree.leafHashes(size + 3, size + 4))[0]!)).toBe(hex(hasher.leaf(entry(size - 1))));
    });
  }

  it('signs nothing when the last full bundle is missing (a log pulled without it), does not hash to its tiles or is cut short', async () => {
    const l = await logAndBuild(256);
    const bundle = join(l.logDir, tilePath({ level: 'entries', index: 0, width: 256 }));
    const bytes = await readFile(bundle);
    const built = await l.next(l.found);
    await rm(bundle);
    await signLogIfNotLive(l.found, built, l.buildDir, key);
    await expect(readFile(join(signed(l.buildDir), 'checkpoint'))).rejects.toThrow(/ENOENT/);
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 1]! ^= 1;
    for (const bad of [flipped, bytes.subarray(0, -1)]) {
      await writeFile(bundle, bad);
      await signLogIfNotLive(l.found, built, l.buildDir, key);
      await expect(readFile(join(signed(l.buildDir), 'checkpoint'))).rejects.toThrow(/ENOENT/);
    }
  });
});
