import { readdir, readFile, readlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { BuildError, LogInconsistentError } from '../core/errors.ts';
import { parseKeySet, KEY_SET_PATH } from '@merchant-verify/verifier';
import {
  BUILD_CHECKPOINT_FILE,
  BUILD_ID,
  BUILDS_DIR,
  BUILD_KEPT_OBJECT,
  BUILD_KEY_SET_OBJECT,
  BUILD_LOG_VKEY_OBJECT,
  CURRENT_LINK,
  DOMAIN_MAP_FILE,
  INDEX_FILE,
  LOG_DIR,
  LOG_VKEY_PATH,
  MANIFEST_FILE,
} from '../core/layout.ts';
import { parseManifest, type Manifest } from '../core/manifest-schema.ts';
import { keptListText, readKept, type KeptBuild } from '../storage/kept-builds.ts';
import { publishedBuildsOf, type PublishedBuilds, type Store } from '../storage/store.ts';
import { TileTree } from '../core/tlog/tile-tree.ts';
import { tilesAdded } from '../core/tlog/tiles.ts';
import { folderTiles } from './tiles.ts';
import { openCheckpoint, parseVkey } from '../keyring/log-key.ts';
import { hasher } from '../core/hash.ts';

export interface UploadOptions {
  /** The records folder `mvr build` wrote; its live build is the one published. */
  recordsDir: string;
  /** The public folder holding the key set published with that build. */
  publicDir: string;
  /** Where to publish (opened with `openStore`); a store builds cannot be published to says so (`StoreNotPublishedError`). */
  to: Store;
  /** Uploads in flight at once. */
  concurrency?: number;
  onProgress?: (p: { uploaded: number; total: number }) => void;
  now?: () => Date;
}

export interface UploadSummary {
  to: string;
  build: string;
  records: number;
  /** Earlier kept builds the bucket did not have yet, uploaded before the live one. */
  earlierBuilds: number;
  objects: number;
  bytes: number;
  seconds: number;
}

/** Every file of a build folder but its manifest, as keys relative to the build, in order. */
async function filesOf(buildDir: string): Promise<string[]> {
  return (await readdir(buildDir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) =>
      join(entry.parentPath, entry.name)
        .slice(buildDir.length + 1)
        .split('\\')
        .join('/'),
    )
    .filter((path) => path !== MANIFEST_FILE)
    .sort();
}

/**
 * Publishes the live build to object storage: every file of `builds/<id>/` (its index and change
 * feeds included), its kept list as `builds/<id>/kept.json`, the key set as
 * `builds/<id>/merchant-verify-keys.json`, the manifest, then `live.json` naming the build. The
 * transparency log's tiles that the build added go to `log/` first, and its verifier key beside
 * the key set (the build's own `log-checkpoint` is among its files).
 * Before it, each kept build the bucket lacks (no manifest there) goes up the same way, manifest
 * last, so every build the kept list names is in the bucket before `live.json` points at that
 * list; an earlier build's records are checked against the live build's key set, which keeps
 * their keys, so it needs none of its own. Readers follow `live.json`, so they see the old build
 * (and its list) or the new one, never a mix, and a publish interrupted anywhere before the last
 * write leaves the old build live. Objects of a build are never changed afterwards; running it
 * again uploads the same bytes again.
 */
export async function uploadBuild(opts: UploadOptions): Promise<UploadSummary> {
  const started = performance.now();
  const published = publishedBuildsOf(opts.to, '--to');
  const live = await readLiveBuild(opts);
  const upload = new Upload(opts, published, live.files.length + 4);
  let earlier: BuildFiles[] = [];
  try {
    earlier = await keptBuildsTheBucketLacks(opts, published, live);
    upload.total += earlier.reduce((n, b) => n + b.files.length + 1, 0);
    for (const b of earlier) await upload.putEarlierBuild(b);
    await upload.putLiveBuild(live);
  } catch (error) {
    throw new BuildError(
      `publish to ${opts.to.name} failed after ${upload.uploaded} of ${upload.total} objects; the live build there is unchanged: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return {
    to: opts.to.name,
    build: live.id,
    records: live.manifest.records,
    earlierBuilds: earlier.length,
    objects: upload.uploaded,
    bytes: upload.bytes,
    seconds: (performance.now() - started) / 1000,
  };
}

/** A build's id and its files but the manifest, relative to its folder. */
interface BuildFiles {
  id: string;
  files: string[];
}

/** The live build to publish, with what goes up beside it, all read and checked before any upload. */
interface LiveBuild extends BuildFiles {
  manifest: Manifest;
  keySetBytes: Buffer;
  kept: KeptBuild[];
}

const buildDirOf = (opts: UploadOptions, id: string) => join(opts.recordsDir, BUILDS_DIR, id);
const manifestOf = async (opts: UploadOptions, id: string) =>
  parseManifest(await readFile(join(buildDirOf(opts, id), MANIFEST_FILE)), join(buildDirOf(opts, id), MANIFEST_FILE));

/** The build `current` points at, its manifest, the key set it is checked against and the kept list; refused if they cannot go live. */
async function readLiveBuild(opts: UploadOptions): Promise<LiveBuild> {
  const target = await readlink(join(opts.recordsDir, CURRENT_LINK)).catch(() => null);
  if (!target) throw new BuildError(`no live build in ${opts.recordsDir} (run "mvr build" first)`);
  const id = basename(target);
  if (!BUILD_ID.test(id)) throw new BuildError(`${opts.recordsDir}/${CURRENT_LINK} points at "${target}", not a build`);
  const manifest = await manifestOf(opts, id);
  const keySetFile = join(opts.publicDir, KEY_SET_PATH);
  const keySetBytes = await readFile(keySetFile).catch((error: Error) => {
    throw new BuildError(`cannot read the key set ${keySetFile}: ${error.message}`);
  });
  // The gateway verifies every record against this key set: refuse one that could not pass them
  // (a private key in it, or not the key the build signed with).
  const keySet = parseKeySet(JSON.parse(keySetBytes.toString('utf8')));
  if (manifest.key_id && !keySet.keys.some((k) => k.kid === manifest.key_id)) {
    throw new BuildError(`the key set ${keySetFile} does not list ${manifest.key_id}, the key build ${id} was signed with`);
  }
  if (manifest.log) await checkLogExtendsBucket(opts, buildDirOf(opts, id));
  const kept = await readKept(opts.recordsDir);
  return { id, files: await filesOf(buildDirOf(opts, id)), manifest, keySetBytes, kept };
}

/** The kept builds (but the live one) the bucket has no manifest of yet: they go up before it. */
async function keptBuildsTheBucketLacks(opts: UploadOptions, published: PublishedBuilds, live: LiveBuild): Promise<BuildFiles[]> {
  const earlier: BuildFiles[] = [];
  for (const { id } of live.kept.filter((b) => b.id !== live.id)) {
    if (await published.hasBuild(id)) continue;
    const files = await filesOf(buildDirOf(opts, id));
    // A build pulled for building (`mvr pull`: manifest only) cannot be uploaded from here.
    if (!files.includes(INDEX_FILE))
      throw new Error(`kept build ${id} is not in the bucket, and ${buildDirOf(opts, id)} holds only its manifest`);
    earlier.push({ id, files });
  }
  return earlier;
}

/** One publish's uploads, counted for its progress and summary. */
class Upload {
  uploaded = 0;
  bytes = 0;
  private readonly opts: UploadOptions;
  private readonly published: PublishedBuilds;
  /** Objects to upload, growing as the builds' log tiles are counted. */
  total: number;

  constructor(opts: UploadOptions, published: PublishedBuilds, total: number) {
    this.opts = opts;
    this.published = published;
    this.total = total;
  }

  /** An earlier kept build: its log tiles, its files, its manifest last. */
  async putEarlierBuild(b: BuildFiles): Promise<void> {
    await this.putTiles(b.id);
    await this.putFiles(b.id, b.files);
    await this.putFile(b.id, MANIFEST_FILE, await readFile(join(buildDirOf(this.opts, b.id), MANIFEST_FILE)));
  }

  /** The live build: its tiles and files, the log key, kept list and key set beside it, its manifest, then `live.json`. */
  async putLiveBuild(live: LiveBuild): Promise<void> {
    await this.putTiles(live.id);
    await this.putFiles(live.id, live.files);
    if (live.manifest.log)
      await this.putFile(
        live.id,
        BUILD_LOG_VKEY_OBJECT,
        await readFile(join(this.opts.publicDir, LOG_VKEY_PATH)),
        'text/plain; charset=utf-8',
      );
    await this.putFile(live.id, BUILD_KEPT_OBJECT, Buffer.from(keptListText(live.kept)));
    await this.putFile(live.id, BUILD_KEY_SET_OBJECT, live.keySetBytes);
    await this.putFile(live.id, MANIFEST_FILE, await readFile(join(buildDirOf(this.opts, live.id), MANIFEST_FILE)));
    const pointer = { build: live.id, published_at: (this.opts.now?.() ?? new Date()).toISOString(), records: live.manifest.records };
    await this.put(this.published.putLive(pointer), Buffer.from(`${JSON.stringify(pointer)}\n`));
  }

  /** A build's files, `concurrency` at a time; its manifest is the caller's to put, last. */
  private async putFiles(id: string, paths: string[]): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (next < paths.length) {
        const path = paths[next++]!;
        const body = await readFile(join(buildDirOf(this.opts, id), path));
        await this.putFile(id, path, body, path === DOMAIN_MAP_FILE ? 'application/octet-stream' : undefined);
      }
    };
    await Promise.all(Array.from({ length: this.opts.concurrency ?? 16 }, lane));
  }

  /**
   * The log's tiles a build added (from its manifest's entries), under `log/`: immutable, so they
   * go up first; readers reach them only through a checkpoint, which goes live with the build.
   */
  private async putTiles(id: string): Promise<void> {
    const log = (await manifestOf(this.opts, id)).log;
    if (!log) return;
    const paths = tilesAdded(log.from, log.to);
    this.total += paths.length;
    for (const path of paths) {
      const body = await readFile(join(this.opts.publicDir, LOG_DIR, path));
      await this.put(this.published.putLogFile(path, body), body);
    }
  }

  private putFile(id: string, path: string, body: Buffer, type?: string): Promise<void> {
    return this.put(this.published.putBuildFile(id, path, body, type), body);
  }

  private async put(write: Promise<void>, body: Buffer): Promise<void> {
    await write;
    this.bytes += body.length;
    this.uploaded++;
    this.opts.onProgress?.({ uploaded: this.uploaded, total: this.total });
  }
}

/**
 * The bucket's log only grows: the build's log must be an append-only extension of the
 * checkpoint of the build live in the bucket (consistency computed from the local tiles), or
 * nothing is uploaded. This catches a build that started a new log or carried an old one (run
 * without `mvr log pull`), which would otherwise overwrite published tiles and fork the log.
 */
async function checkLogExtendsBucket(opts: UploadOptions, buildDir: string): Promise<void> {
  const liveBuild = await publishedBuildsOf(opts.to, '--to')
    .liveNow()
    .catch((error: Error) => {
      throw new BuildError(`cannot read ${opts.to.name}: ${error.message}; nothing was published`, { cause: error });
    });
  const publishedNote = liveBuild && (await opts.to.readFile(liveBuild, BUILD_CHECKPOINT_FILE));
  if (!publishedNote) return;
  const vkeyFile = join(opts.publicDir, LOG_VKEY_PATH);
  const vkey = parseVkey(await readFile(vkeyFile, 'utf8'), vkeyFile);
  const published = openCheckpoint(publishedNote.toString('utf8'), vkey, `the log checkpoint of ${opts.to.name}'s live build ${liveBuild}`);
  const ours = openCheckpoint(await readFile(join(buildDir, BUILD_CHECKPOINT_FILE), 'utf8'), vkey, join(buildDir, BUILD_CHECKPOINT_FILE));
  const logDir = join(opts.publicDir, LOG_DIR);
  const consistent = await new TileTree(hasher, ours.size, folderTiles(logDir)).extends(published, ours.root).catch((error: Error) => {
    throw new LogInconsistentError(
      `cannot prove that the log in ${logDir} extends the one published in ${opts.to.name}: ${error.message}; nothing was published`,
    );
  });
  if (!consistent) {
    throw new LogInconsistentError(
      `the log in ${logDir} (size ${ours.size}) does not extend the one published in ${opts.to.name} (size ${published.size}, build ${liveBuild}); ` +
        'nothing was published (run "mvr log pull" from the published log before the build)',
    );
  }
}
