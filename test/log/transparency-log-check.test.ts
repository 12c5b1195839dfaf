/**
 * `mvr log check` on a real log two months running: consistent with last month's checkpoint,
 * and refused when the log rewrote or dropped an entry, even re-signed with the log key.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { formatCheckpoint } from '@merchant-verify/verifier/internal/tlog';
import { afterAll, describe, expect, it } from 'vitest';
import { hasher } from '../../core/hash.ts';
import { emptyEdge, TileAppender, unbundle } from '../../core/tlog/appender.ts';
import { TileTree } from '../../core/tlog/tile-tree.ts';
import { loadLogKey, signNote } from '../../keyring/log-key.ts';
import { folderTiles } from '../../storage/log-tiles.ts';
import { runCli } from '../support/cli.ts';
import { cleanup } from '../support/gateway.ts';
import { logDir, twoLoggedMonths, vkeyFile } from '../support/logged-project.ts';
import { ISSUER, removeTempDirs, tempDir } from '../support/project.ts';

afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

describe('a logged build, two months running', async () => {
  const { p, novCheckpoint, g } = await twoLoggedMonths();

  it("mvr log check: consistent with last month's checkpoint, and --update saves the live one", async () => {
    const saved = join(await tempDir(), 'checkpoint');
    await writeFile(saved, novCheckpoint);
    const r = await runCli(['log', 'check', '--checkpoint', saved, '--log', `${g.url}/log`, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ consistent: true, origin: `${ISSUER}/log`, from: 34, to: 68 });
    const folder = await runCli(['log', 'check', '--checkpoint', saved, '--public', p.publicDir, '--update']);
    expect(folder.code, folder.stderr).toBe(0);
    expect(folder.stdout).toMatch(/grew from 34 to 68 entries/);
    expect(await readFile(saved, 'utf8')).toBe(await readFile(join(logDir(p), 'checkpoint'), 'utf8'));
  });

  it('mvr log check fails when the log rewrote or dropped an entry, even re-signed with the log key', async () => {
    const key = (await loadLogKey(p.keysDir, undefined))!;
    const entries: Uint8Array[] = [];
    for (const t of ['tile/entries/000.p/68']) entries.push(...unbundle(await readFile(join(logDir(p), t))));
    expect(entries).toHaveLength(68);
    const saved = join(await tempDir(), 'checkpoint');
    await writeFile(saved, novCheckpoint);
    const rogue = async (list: Uint8Array[]) => {
      const dir = join(await tempDir(), 'log');
      const appender = new TileAppender(hasher, emptyEdge(), (path, bytes) => {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), bytes);
      });
      for (const e of list) appender.append(e);
      appender.finish();
      const root = await new TileTree(hasher, list.length, folderTiles(dir)).root();
      await writeFile(join(dir, 'checkpoint'), signNote(key, formatCheckpoint({ origin: key.name, size: list.length, root })));
      return runCli(['log', 'check', '--checkpoint', saved, '--log', dir, '--log-key', vkeyFile(p)]);
    };
    // The honest log rebuilt from its own entries passes: the check itself is sound.
    expect((await rogue(entries)).code).toBe(0);
    const rewritten = entries.map((e, i) => (i === 5 ? createHash('sha256').update('rewritten').digest() : e));
    const r1 = await rogue(rewritten);
    expect(r1.code).toBe(14);
    expect(r1.stderr).toMatch(/LOG_INCONSISTENT|not an append-only extension/);
    const r2 = await rogue([...entries.slice(0, 5), ...entries.slice(6)]);
    expect(r2.code).toBe(14);
    // A log that lost entries (smaller than the saved checkpoint) is refused too.
    const r3 = await rogue(entries.slice(0, 20));
    expect(r3.code).toBe(14);
    expect(r3.stderr).toMatch(/fewer than the 34/);
  });
});
