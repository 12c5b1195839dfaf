/**
 * A records folder's files have the limits of their kind too (core/limits.ts): a domain map
 * larger than a domain map may be (a sparse file here, so the test allocates nothing) is refused
 * unread with its typed error, never read into memory, and a file within its limit reads as before.
 */
import { truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ReadTooLargeError } from '../../core/errors/errors.ts';
import { CURRENT_LINK, DOMAIN_MAP_FILE, MANIFEST_FILE } from '../../core/layout.ts';
import { READ_LIMITS } from '../../core/limits.ts';
import { openStore } from '../../storage/open.ts';
import { copyProject, makeProject, removeTempDirs } from '../support/project.ts';

afterAll(removeTempDirs);

describe('a records folder past its limits', () => {
  it('a domain map larger than its limit is refused unread (ReadTooLargeError); the manifest beside it reads', async () => {
    const p = await copyProject(await makeProject());
    const store = openStore({ url: p.recordsDir, publicDir: p.publicDir });
    await store.refresh();
    await truncate(join(p.recordsDir, CURRENT_LINK, DOMAIN_MAP_FILE), READ_LIMITS.domainMap.bytes + 1);
    const before = process.memoryUsage().rss;
    const refused = await store.readLiveFile(DOMAIN_MAP_FILE).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ReadTooLargeError);
    expect(refused).toMatchObject({ code: 'STORE_UNAVAILABLE', file: 'domainMap', limitBytes: READ_LIMITS.domainMap.bytes });
    expect(process.memoryUsage().rss - before).toBeLessThan(READ_LIMITS.domainMap.bytes / 2);
    expect((await store.readLiveFile(MANIFEST_FILE))?.length).toBeGreaterThan(0);
    await store.close();
  });
});
