import { readdir, readFile, readlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { KEY_SET_PATH, parseKeySet } from '@merchant-verify/verifier';
import { hasher } from '../core/crypto/hash.ts';
import { BuildError, LogInconsistentError } from '../core/errors/errors.ts';
import {
  BUILD_CHECKPOINT_FILE,
  BUILD_ID,
  BUILD_LOG_IF_NOT_LIVE_DIR,
  BUILDS_DIR,
  CURRENT_LINK,
  INDEX_FILE,
  isRecordFile,
  LOG_DIR,
  LOG_VKEY_PATH,
  MANIFEST_FILE,
} from '../core/layout.ts';
import { type Manifest, parseManifest } from '../core/schemas/manifest.ts';
import { TileTree } from '../core/tlog/tile-tree.ts';
import { openCheckpoint, parseVkey } from '../keyring/log-key.ts';
import { type KeptBuild, readKept } from '../storage/kept-builds.ts';
import { folderTiles } from '../storage/log-tiles.ts';
import { type PublishedBuilds, publishedBuildsOf, type Store } from '../storage/store.ts';
import type { Witnessing, WitnessReport } from '../witness/build-phase/witnessing.ts';
import type { PublishProgress } from './publish-objects.ts';

// What `mvr publish` puts up, read and checked before any upload (builder/publish.ts uploads it).

export interface UploadOptions {
  /** The records folder `mvr build` wrote; its live build is the one published. */
  recordsDir: string;
  /** The public folder holding the key set published with that build. */
  publicDir: string;
  /** Where to publish (opened with `openStore`); a store builds cannot be published to says so (`StoreNotPublishedError`). */
  to: Store;
  /** Requests in flight at once (`--concurrency`). */
  concurrency?: number;
  /** Files larger than this go up in parts of this size (`--part-mib`); 5 MiB at least. */
  partBytes?: number;
  onProgress?: (p: PublishProgress) => void;
  now?: () => Date;
  /** `--witness-policy`: the live build's checkpoint is cosigned afresh by the policy's quorum before anything is uploaded. */
  witnessing?: Witnessing | null;
  onWitness?: (report: WitnessReport) => void;
}

/** Every file of a build folder but its manifest, its per-record tree (the packs hold the records) and its log if not live, as keys relative to the build, in order. */
export async function filesOf(buildDir: string): Promise<string[]> {
  return (await readdir(buildDir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) =>
      join(entry.parentPath, entry.name)
        .slice(buildDir.length + 1)
        .split('\\')
        .join('/'),
    )
    .filter((path) => path !== MANIFEST_FILE && !isRecordFile(path) && !path.startsWith(`${BUILD_LOG_IF_NOT_LIVE_DIR}/`))
    .sort();
}

/** A build's id and its files but the manifest, relative to its folder. */
export interface BuildFiles {
  id: string;
  files: string[];
}

/** The live build to publish, with what goes up beside it, all read and checked before any upload. */
export interface LiveBuild extends BuildFiles {
  manifest: Manifest;
  keySetBytes: Buffer;
  kept: KeptBuild[];
}

export const buildDirOf = (opts: UploadOptions, id: string) => join(opts.recordsDir, BUILDS_DIR, id);
export const manifestOf = async (opts: UploadOptions, id: string) =>
  parseManifest(await readFile(join(buildDirOf(opts, id), MANIFEST_FILE)), join(buildDirOf(opts, id), MANIFEST_FILE));

/** The build `current` points at, its manifest, the key set it is checked against and the kept list; refused if they cannot go live. */
export async function readLiveBuild(opts: UploadOptions): Promise<LiveBuild> {
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
export async function keptBuildsTheBucketLacks(opts: UploadOptions, published: PublishedBuilds, live: LiveBuild): Promise<BuildFiles[]> {
  const earlier: BuildFiles[] = [];
  for (const { id } of live.kept.filter((b) => b.id !== live.id)) {
    if (await published.hasBuild(id)) continue;
    const files = await filesOf(buildDirOf(opts, id));
    // A build pulled for building (`mvr pull`: manifest only) cannot be uploaded from here.
    if (!files.includes(INDEX_FILE))
      throw new BuildError(`kept build ${id} is not in the bucket, and ${buildDirOf(opts, id)} holds only its manifest`);
    earlier.push({ id, files });
  }
  return earlier;
}

/**
 * The bucket's log only grows: the build's log must be an append-only extension of the bucket's
 * head (`log/checkpoint`, the newest checkpoint sent to a witness), or of the live build's
 * checkpoint in a bucket without one (consistency computed from the local tiles), or nothing is
 * uploaded. This catches a build that started a new log or carried an old one (run without
 * `mvr log pull`), which would otherwise overwrite published tiles and fork the log.
 */
async function checkLogExtendsBucket(opts: UploadOptions, buildDir: string): Promise<void> {
  const bucket = publishedBuildsOf(opts.to, '--to');
  const read = async () => {
    const head = await bucket.logHead();
    if (head) return { note: head, name: `the log head ${opts.to.name}/log/checkpoint`, what: 'its log head' };
    const liveBuild = await bucket.liveNow();
    const note = liveBuild && (await opts.to.readFile(liveBuild, BUILD_CHECKPOINT_FILE));
    return note ? { note, name: `the log checkpoint of ${opts.to.name}'s live build ${liveBuild}`, what: `build ${liveBuild}` } : null;
  };
  const bucketLog = await read().catch((error: Error) => {
    throw new BuildError(`cannot read ${opts.to.name}: ${error.message}; nothing was published`, { cause: error });
  });
  if (!bucketLog) return;
  const vkeyFile = join(opts.publicDir, LOG_VKEY_PATH);
  const vkey = parseVkey(await readFile(vkeyFile, 'utf8'), vkeyFile);
  const published = openCheckpoint(bucketLog.note.toString('utf8'), vkey, bucketLog.name);
  const ours = openCheckpoint(await readFile(join(buildDir, BUILD_CHECKPOINT_FILE), 'utf8'), vkey, join(buildDir, BUILD_CHECKPOINT_FILE));
  const logDir = join(opts.publicDir, LOG_DIR);
  const consistent = await new TileTree(hasher, ours.size, folderTiles(logDir)).extends(published, ours.root).catch((error: Error) => {
    throw new LogInconsistentError(
      `cannot prove that the log in ${logDir} extends the one published in ${opts.to.name}: ${error.message}; nothing was published`,
    );
  });
  if (!consistent) {
    throw new LogInconsistentError(
      `the log in ${logDir} (size ${ours.size}) does not extend the one published in ${opts.to.name} (size ${published.size}, ${bucketLog.what}); ` +
        'nothing was published (run "mvr log pull" from the published log before the build)',
    );
  }
}
