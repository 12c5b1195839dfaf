/**
 * The store contract: every backend (a records folder, an http(s) origin serving the live build's
 * folder, an S3 bucket as `mvr publish` fills it) answers the questions of storage/store.ts the
 * same way, from the same two builds (a record is a range of its pack), and fails closed the same way: a store that is down is
 * STORE_UNAVAILABLE, never "no such record" or "no such build". A store that cannot answer a
 * question at all says so with its typed error. A new backend is one entry in BACKENDS.
 */
import { readdir, readFile, realpath, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadBuild } from '../../builder/publish.ts';
import { CHANGES_DIR, DOMAIN_MAP_FILE, LOG_VKEY_PATH, MANIFEST_FILE } from '../../core/layout.ts';
import { createLogKey, logOrigin } from '../../keyring/log-key.ts';
import { openStore } from '../../storage/open.ts';
import { parseS3Url, S3Bucket, s3ConfigFromEnv } from '../../storage/s3/bucket.ts';
import { publishedBuildsOf, type Store } from '../../storage/store.ts';
import { livePlace, liveRecordBytes, placeIn } from '../support/packs.ts';
import { build, copyProject, ISSUER, makeProject, type Project, removeTempDirs } from '../support/project.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { startStaticOrigin } from '../support/static-origin.ts';

const KNOWN = 'acme-outdoor.example';
/** A pack no build has. */
const NO_PACK = `packs/${'0'.repeat(64)}.jsonl`;
const BUCKET = 'contract';

interface Opened {
  store: Store;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

interface Backend {
  name: string;
  open(p: Project): Promise<Opened>;
  /** Names its live build (a folder's `current`, a bucket's `live.json`); an origin serves one unnamed. */
  namesBuild: boolean;
  /** Keeps past builds and the log (else NoBuildHistoryError / NoLogError). */
  keepsBuilds: boolean;
  /** Builds are published to it (`mvr publish`) and pulled from it (`mvr pull`). */
  published: boolean;
}

let s3: TestS3;
const liveDir = (p: Project) => realpath(join(p.recordsDir, 'current'));

const BACKENDS: Backend[] = [
  {
    name: 'a records folder',
    namesBuild: true,
    keepsBuilds: true,
    published: false,
    open: async (p) => ({
      store: openStore({ url: p.recordsDir, publicDir: p.publicDir }),
      down: () => rename(p.recordsDir, `${p.recordsDir}.away`),
      up: () => rename(`${p.recordsDir}.away`, p.recordsDir),
      close: async () => undefined,
    }),
  },
  {
    name: 'an http(s) origin',
    namesBuild: false,
    keepsBuilds: false,
    published: false,
    open: async (p) => {
      const origin = await startStaticOrigin(await liveDir(p));
      return {
        store: openStore({ url: origin.url, publicDir: p.publicDir }),
        down: origin.stop,
        up: origin.start,
        close: origin.stop,
      };
    },
  },
  {
    name: 'an S3 bucket',
    namesBuild: true,
    keepsBuilds: true,
    published: true,
    open: async (p) => {
      const url = `s3://${BUCKET}/${p.root.split('/').at(-1)}`;
      const store = openStore({ url, s3: s3ConfigFromEnv(s3.env) });
      await uploadBuild({ recordsDir: p.recordsDir, publicDir: p.publicDir, to: store });
      const bucket = new S3Bucket(parseS3Url(url), s3ConfigFromEnv(s3.env));
      return {
        store,
        down: () => s3.stop(),
        up: () => s3.start(),
        close: () => bucket.close(),
      };
    },
  },
];

/** The two builds every backend serves, made once; each backend gets a copy of their outputs to fault. */
let built: Project;
let first: string;
let live: string;

beforeAll(async () => {
  const twoBuilds = async () => {
    built = await makeProject({ build: false });
    await createLogKey(built.keysDir, logOrigin(ISSUER));
    first = (await build(built, { now: Date.parse('2026-10-20T00:00:00Z') })).buildId;
    // A domain dropped between the builds, so the live build's change feed from the first is not empty.
    await rm(join(built.auditsDir, 'platforms', 'single-audit.json'));
    live = (await build(built, { now: Date.parse('2026-11-01T00:00:00Z') })).buildId;
  };
  [s3] = await Promise.all([startS3([BUCKET]), twoBuilds()]);
});
afterAll(async () => {
  await s3?.close();
  await removeTempDirs();
});

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'answered',
    (error: { code?: string }) => error.code ?? String(error),
  );

describe.each(BACKENDS)('the store contract: $name', (backend) => {
  let p: Project;
  let opened: Opened;
  let store: Store;

  beforeAll(async () => {
    p = await copyProject(built);
    opened = await backend.open(p);
    store = opened.store;
    await store.refresh();
  });
  afterAll(async () => {
    await store?.close();
    await opened?.close();
  });

  it('the live build: healthy, a generation, and its id where the store names one', () => {
    expect(store.describe()).toMatchObject({ ok: true, error: null });
    expect(store.generation()).not.toBe('');
    expect(store.liveBuild()).toBe(backend.namesBuild ? live : null);
  });

  it("a record's bytes as the build wrote them, one range of its pack; null for a pack the build does not have", async () => {
    const { path, start, length } = await livePlace(p, KNOWN);
    expect(await store.readLiveRange(path, start, length)).toEqual(await liveRecordBytes(p, KNOWN));
    expect(await store.readLiveRange(NO_PACK, 0, 10)).toBeNull();
  });

  it('a range of a pack larger than its limit (256 KiB) is refused before it is asked for', async () => {
    const { path } = await livePlace(p, KNOWN);
    await expect(store.readLiveRange(path, 0, 256 * 1024 + 1)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', file: 'packRange' });
  });

  it("the live build's files (domain map), null for none; the key set published with it", async () => {
    expect(await store.readLiveFile(DOMAIN_MAP_FILE)).toEqual(await readFile(join(await liveDir(p), DOMAIN_MAP_FILE)));
    expect(await store.readLiveFile('no-such-file')).toBeNull();
    expect(await store.keySet().read()).toEqual(await readFile(join(p.publicDir, KEY_SET_PATH)));
  });

  it('kept builds, their files and records, and ranges of the change feed (or, from a store that keeps none, BUILD_NOT_FOUND saying so)', async () => {
    const feed = `${CHANGES_DIR}/${first}.jsonl`;
    if (!backend.keepsBuilds) {
      for (const asked of [
        store.keptVersion(),
        store.keptBuilds(),
        store.readFile(first, MANIFEST_FILE),
        store.readRange(first, NO_PACK, 0, 10),
        store.readRange(live, feed, 0, 10),
      ]) {
        await expect(asked).rejects.toMatchObject({ code: 'BUILD_NOT_FOUND', message: expect.stringMatching(/keeps no build history/) });
      }
      return;
    }
    const dirOf = (id: string) => join(p.recordsDir, 'builds', id);
    expect((await store.keptBuilds()).map((b) => b.id)).toEqual([live, first]);
    expect(await store.readFile(first, MANIFEST_FILE)).toEqual(await readFile(join(dirOf(first), MANIFEST_FILE)));
    expect(await store.readFile(first, 'no-such-file')).toBeNull();
    const kept = await placeIn(dirOf(first), KNOWN);
    expect(await store.readRange(first, kept.path, kept.start, kept.length)).toEqual(
      (await readFile(kept.file)).subarray(kept.start, kept.start + kept.length),
    );
    expect(await store.readRange(first, NO_PACK, 0, 10)).toBeNull();
    const whole = await readFile(join(dirOf(live), feed));
    expect(whole.length).toBeGreaterThan(13);
    expect(await store.readRange(live, feed, 3, 10)).toEqual(whole.subarray(3, 13));
    expect(await store.readRange(live, feed, whole.length - 4, 10)).toEqual(whole.subarray(whole.length - 4));
    expect(await store.readRange(live, `${CHANGES_DIR}/no-such-build.jsonl`, 0, 10)).toBeNull();
  });

  it("the log's public files: checkpoint, tiles, verifier key (and proofs only from a store that keeps the log)", async () => {
    const checkpoint = await readFile(join(p.publicDir, 'log', 'checkpoint'));
    expect(await store.logFile('checkpoint')).toEqual(checkpoint);
    // The partial tile of the whole log as the live build left it (both builds have fewer than 256 entries).
    const widths = (await readdir(join(p.publicDir, 'log', 'tile/0/000.p'))).map(Number);
    const tile = `tile/0/000.p/${Math.max(...widths)}`;
    expect(await store.logFile(tile)).toEqual(await readFile(join(p.publicDir, 'log', tile)));
    expect(await store.logFile('tile/0/x999')).toBeNull();
    expect(await store.logVkey()).toEqual(await readFile(join(p.publicDir, LOG_VKEY_PATH)));
    if (backend.keepsBuilds) expect(await store.logBuild()).toBe(live);
    else await expect(store.logBuild()).rejects.toMatchObject({ code: 'NOT_IN_LOG' });
  });

  it('publishing: a store builds are published to names its live build; any other is a usage error naming the flag', async () => {
    if (!backend.published) {
      expect(() => publishedBuildsOf(store, '--to')).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringMatching(/^--to .*: not s3:\/\/BUCKET\/PREFIX/) }),
      );
      return;
    }
    const published = publishedBuildsOf(store, '--to');
    expect(await published.liveNow()).toBe(live);
    expect(await published.hasBuild(first)).toBe(true);
    expect(await published.hasBuild('no-such-build')).toBe(false);
  });

  it('fails closed: a store that is down is STORE_UNAVAILABLE for every question, never "not found"; back up, it answers again', async () => {
    const { path, start, length } = await livePlace(p, KNOWN);
    await opened.down();
    try {
      await store.refresh();
      expect(store.describe()).toMatchObject({ ok: false, error: expect.any(String) });
      expect(store.generation()).toBe('');
      const asked: Promise<unknown>[] = [
        store.readLiveRange(path, start, length),
        store.readLiveRange(NO_PACK, 0, 10),
        store.readLiveFile(DOMAIN_MAP_FILE),
      ];
      if (backend.keepsBuilds) {
        asked.push(
          store.keptBuilds(),
          store.readFile(first, MANIFEST_FILE),
          store.readRange(first, NO_PACK, 0, 10),
          store.readRange(live, `${CHANGES_DIR}/${first}.jsonl`, 0, 10),
          store.logBuild(),
        );
      }
      expect(await Promise.all(asked.map(codeOf))).toEqual(asked.map(() => 'STORE_UNAVAILABLE'));
    } finally {
      await opened.up();
    }
    await store.refresh();
    expect(store.describe().ok).toBe(true);
    expect(await store.readLiveRange(path, start, length)).toEqual(await liveRecordBytes(p, KNOWN));
  });
});
