import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BuildError } from '../core/errors.ts';
import {
  BUILD_CHECKPOINT_FILE,
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
import { type LogWitnessSummary, witnessLiveFolder } from '../witness/build-phase/refresh.ts';
import type { WitnessReport } from '../witness/build-phase/witnessing.ts';
import {
  type BuildFiles,
  buildDirOf,
  keptBuildsTheBucketLacks,
  type LiveBuild,
  manifestOf,
  readLiveBuild,
  type UploadOptions,
} from './publish-plan.ts';

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
 * transparency log goes first: the tiles the builds added to `log/`, then the live build's
 * checkpoint as the log's head (`log/checkpoint`), before it is sent to any witness, so the next
 * build extends what the witnesses saw even if this one never goes live; with the quorum the head
 * is written again, cosigned. The log's verifier key goes beside the key set (the build's own
 * `log-checkpoint` is among its files).
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
  let witnessed: LogWitnessSummary | null = null;
  try {
    earlier = await keptBuildsTheBucketLacks(opts, published, live);
    upload.total += earlier.reduce((n, b) => n + b.files.length + 1, 0);
    // The log first: its tiles, then its head, so the checkpoint a witness is sent is never rolled back.
    for (const b of [...earlier, live]) await upload.putTiles(b.id);
    if (live.manifest.log) await upload.putHead(live.id);
  } catch (error) {
    throw failed(opts, upload, error);
  }
  // Short of its quorum, nothing more goes up: the live build there stays, the head keeps the sent checkpoint.
  if (opts.witnessing && live.manifest.log)
    try {
      witnessed = await witnessLiveFolder(opts.witnessing, opts, opts.onWitness);
    } finally {
      await upload.putHead(live.id);
    }
  try {
    for (const b of earlier) await upload.putEarlierBuild(b);
    await upload.putLiveBuild(live);
  } catch (error) {
    throw failed(opts, upload, error);
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

const failed = (opts: UploadOptions, upload: Upload, error: unknown) =>
  new BuildError(
    `publish to ${opts.to.name} failed after ${upload.uploaded} of ${upload.total} objects; the live build there is unchanged: ${(error as Error).message}`,
    { cause: error },
  );

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

  /** An earlier kept build (its log tiles are up already): its files, its manifest last. */
  async putEarlierBuild(b: BuildFiles): Promise<void> {
    await this.putFiles(b.id, b.files);
    await this.putFile(b.id, MANIFEST_FILE, await readFile(join(buildDirOf(this.opts, b.id), MANIFEST_FILE)));
  }

  /** The live build (its log tiles and head are up already): its files, the log key, kept list and key set beside it, its manifest, then `live.json`. */
  async putLiveBuild(live: LiveBuild): Promise<void> {
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
   * go up first; readers reach them only through a checkpoint (the head, or a live build's).
   */
  async putTiles(id: string): Promise<void> {
    const log = (await manifestOf(this.opts, id)).log;
    if (!log) return;
    const paths = tilesAdded(log.from, log.to);
    this.total += paths.length;
    for (const path of paths) {
      const body = await readFile(join(this.opts.publicDir, LOG_DIR, path));
      await this.put(this.published.putLogFile(path, body), body);
    }
  }

  /** The build's checkpoint (with the cosignatures it has so far) as the log's head, `log/checkpoint`. */
  async putHead(id: string): Promise<void> {
    const note = await readFile(join(buildDirOf(this.opts, id), BUILD_CHECKPOINT_FILE));
    this.total++;
    await this.put(this.published.putLogHead(note), note);
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
