import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BuildError } from '../core/errors.ts';
import {
  BUILD_KEPT_OBJECT,
  BUILD_KEY_SET_OBJECT,
  BUILD_LOG_VKEY_OBJECT,
  DOMAIN_MAP_FILE,
  LOG_DIR,
  LOG_VKEY_PATH,
  MANIFEST_FILE,
} from '../core/layout.ts';
import { tilesAdded } from '../core/tlog/tiles.ts';
import { keptListText } from '../storage/kept-builds.ts';
import { type PublishedBuilds, publishedBuildsOf } from '../storage/store.ts';
import { witnessLiveFolder } from './log-witness.ts';
import {
  type BuildFiles,
  buildDirOf,
  keptBuildsTheBucketLacks,
  type LiveBuild,
  manifestOf,
  readLiveBuild,
  type UploadOptions,
} from './publish-plan.ts';
import type { WitnessReport } from './witnessing.ts';

export type { UploadOptions };

export interface UploadSummary {
  to: string;
  build: string;
  records: number;
  /** Earlier kept builds the bucket did not have yet, uploaded before the live one. */
  earlierBuilds: number;
  objects: number;
  bytes: number;
  seconds: number;
  /** What each witness of the policy answered; null without one. */
  witnesses: WitnessReport[] | null;
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
  // Witnessed before the first upload: a checkpoint short of its quorum leaves the bucket as it was.
  const witnessed = opts.witnessing && live.manifest.log ? await witnessLiveFolder(opts.witnessing, opts, opts.onWitness) : null;
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
    witnesses: witnessed?.witnesses ?? null,
  };
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
