/**
 * No link followed where a store reads: below the live pointer (`current`, resolved once per
 * build), a symbolic link in the place of any file the gateway or the mirror routes read is
 * refused, whether it leads out of the build or to a file inside it with the very same bytes, and
 * a HEAD never gives its target's size. A file read whole is 503 STORE_UNAVAILABLE, a file read a
 * range at a time (a pack, the map, the pack index, the index) 503 UNAVAILABLE; a map, statement,
 * pack index or manifest linked in a build makes the build refused whole. Never a 404: a link is
 * not "no such file".
 */
import { readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUILD_CHECKPOINT_FILE,
  BUILD_SERVED_CHECKPOINT_FILE,
  BUILD_STATEMENT_FILE,
  CURRENT_LINK,
  DOMAIN_MAP_FILE,
  INDEX_FILE,
  MANIFEST_FILE,
  PACK_INDEX_FILE,
} from '../../core/layout.ts';
import { addApiKey, cleanup, type TestGateway } from '../support/gateway.ts';
import { expectCauseLogged, expectProblem } from '../support/gateway-expect.ts';
import { gatewayOver, logDir, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { livePackFile, livePlace } from '../support/packs.ts';
import { build, type Project } from '../support/project.ts';
import { waitFor } from '../support/wait.ts';

afterAll(cleanup);

const WHERE = ['outside the build', 'inside the build'] as const;
type Where = (typeof WHERE)[number];

/**
 * Puts a link in `file`'s place, to a copy of its bytes (a new file, so nothing that watches the
 * file's identity mistakes it for the old one) outside the build or beside the file; returns
 * what puts the file back.
 */
async function linkInPlace(p: Project, file: string, where: Where): Promise<{ size: number; restore: () => Promise<void> }> {
  const bytes = await readFile(file);
  const target = where === 'outside the build' ? join(p.root, `outside-${basename(file)}`) : `${file}.copy`;
  await writeFile(target, bytes);
  await rm(file);
  await symlink(target, file);
  return {
    size: bytes.length,
    restore: async () => {
      await rm(file);
      await writeFile(file, bytes);
      await rm(target);
    },
  };
}

describe('the mirror routes and the public files on a folder', () => {
  let p: Project;
  let g: TestGateway;
  let live: string;
  let liveDir: string;
  let mirrorKey: string;
  beforeAll(async () => {
    p = await loggedProject();
    await build(p, { now: NOV, packRecords: 2 });
    liveDir = await realpath(join(p.recordsDir, CURRENT_LINK));
    live = basename(liveDir);
    // As a refresh writes it after a build short of its quorum: read whole, as the build's own checkpoint is.
    await writeFile(join(liveDir, BUILD_SERVED_CHECKPOINT_FILE), await readFile(join(liveDir, BUILD_CHECKPOINT_FILE)));
    g = await gatewayOver(p);
    mirrorKey = (await addApiKey(g, 'mirror', ['mirror'])).key;
  });

  const whole = [BUILD_STATEMENT_FILE, BUILD_CHECKPOINT_FILE, BUILD_SERVED_CHECKPOINT_FILE];
  const ranged = [DOMAIN_MAP_FILE, PACK_INDEX_FILE, INDEX_FILE, 'a pack'];
  for (const name of [...whole, ...ranged])
    for (const where of WHERE)
      it(`${name} linked ${where}: GET and HEAD 503 ${whole.includes(name) ? 'STORE_UNAVAILABLE' : 'UNAVAILABLE'}, no size of the target; served again once put back`, async () => {
        const path = name === 'a pack' ? (await livePlace(p, 'acme-outdoor.example')).path : name;
        const url = `/v1/mirror/builds/${live}/${path}`;
        const file = join(liveDir, path);
        const code = whole.includes(name) ? 'STORE_UNAVAILABLE' : 'UNAVAILABLE';
        const link = await linkInPlace(p, file, where);
        try {
          const got = await g.request(url, { key: mirrorKey });
          expectCauseLogged(g, expectProblem(got, 503, code), [/symbolic link/]);
          const head = await g.request(url, { key: mirrorKey, method: 'HEAD' });
          expect(head.status).toBe(503);
          expect(head.headers.get('content-length')).not.toBe(String(link.size));
          expect(head.headers.get('content-range')).toBeNull();
        } finally {
          await link.restore();
        }
        const again = await g.request(url, { key: mirrorKey });
        expect(again.status).toBe(200);
        expect(again.bytes.equals(await readFile(file))).toBe(true);
      });

  it('the log checkpoint, a tile and the log key linked: 503 STORE_UNAVAILABLE, each served again once put back', async () => {
    const tiles = (await readdir(join(logDir(p), 'tile'), { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
    const tile = join(tiles[0]!.parentPath, tiles[0]!.name);
    const files: [string, string][] = [
      ['/log/checkpoint', join(logDir(p), 'checkpoint')],
      [`/log/${tile.slice(logDir(p).length + 1)}`, tile],
      ['/.well-known/merchant-verify-log.vkey', vkeyFile(p)],
    ];
    for (const [url, file] of files)
      for (const where of WHERE) {
        const link = await linkInPlace(p, file, where);
        try {
          const got = await g.request(url, { key: null });
          expectCauseLogged(g, expectProblem(got, 503, 'STORE_UNAVAILABLE'), [/symbolic link/]);
        } finally {
          await link.restore();
        }
        expect({ url, status: (await g.request(url, { key: null })).status }).toEqual({ url, status: 200 });
      }
  });

  it('the key set linked: records and the key set 503 STORE_UNAVAILABLE (no key to check with), served again once put back', async () => {
    for (const where of WHERE) {
      const link = await linkInPlace(p, p.keySetFile, where);
      try {
        await waitFor(async () => (await g.verify('acme-outdoor.example')).status === 503, 'the linked key set refused');
        expectProblem(await g.verify('acme-outdoor.example'), 503, 'STORE_UNAVAILABLE');
        expect(g.logs.some((l) => /symbolic link/.test(String(l.error)))).toBe(true);
      } finally {
        await link.restore();
      }
      await waitFor(async () => (await g.verify('acme-outdoor.example')).status === 200, 'the key set served again');
    }
  });

  it("a record's pack linked to a copy inside the build: /v1/verify 503 UNAVAILABLE", async () => {
    // A domain not asked for before, so no verified copy of its record is held.
    const domain = 'greenleaf-tea.example';
    const link = await linkInPlace(p, await livePackFile(p, domain), 'inside the build');
    try {
      expectCauseLogged(g, expectProblem(await g.verify(domain), 503, 'UNAVAILABLE'), [/symbolic link/]);
    } finally {
      await link.restore();
    }
    expect((await g.verify(domain)).status).toBe(200);
  });
});

describe('a map, statement, pack index or manifest linked in the live build: the build is refused whole', () => {
  let p: Project;
  beforeAll(async () => {
    p = await loggedProject();
    await build(p, { now: NOV });
  });
  for (const name of [DOMAIN_MAP_FILE, BUILD_STATEMENT_FILE, PACK_INDEX_FILE, MANIFEST_FILE])
    for (const where of WHERE)
      it(`${name} linked ${where}: every domain 503 STORE_UNAVAILABLE, never "unverified"`, async () => {
        const link = await linkInPlace(p, join(await realpath(join(p.recordsDir, CURRENT_LINK)), name), where);
        const g = await gatewayOver(p);
        try {
          for (const domain of ['acme-outdoor.example', 'never-audited-control.example']) {
            const r = await g.verify(domain);
            expectProblem(r, 503, 'STORE_UNAVAILABLE');
            expect(r.text).not.toContain('unverified');
          }
        } finally {
          await g.close();
          await link.restore();
        }
      });
});
