import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BuildError } from '../core/errors/errors.ts';
import {
  BUILD_CHECKPOINT_FILE,
  BUILD_KEPT_OBJECT,
  BUILD_KEY_SET_OBJECT,
  BUILD_LOG_VKEY_OBJECT,
  LOG_DIR,
  LOG_VKEY_PATH,
  MANIFEST_FILE,
} from '../core/layout.ts';
import { tilesAdded } from '../core/tlog/tiles.ts';
import { keptListText } from '../storage/kept-builds.ts';
import { type PublishedBuilds, publishedBuildsOf, type StoredFile } from '../storage/store.ts';
import { type LogWitnessSummary, witnessLiveFolder } from '../witness/build-phase/refresh.ts';
import type { WitnessReport } from '../witness/build-phase/witnessing.ts';
import { leaveBucketLog } from './log-if-not-live.ts';
import { type LocalFile, localFiles, ObjectSender } from './publish-objects.ts';
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
  /** Objects this publish covers (sent, or found up already) and their bytes. */
  objects: number;
  bytes: number;
  /** Of those, the objects sent and their bytes; the rest were up already (a publish run again). */
  uploaded: number;
  uploadedBytes: number;
  skipped: number;
  seconds: number;
  /** What each witness of the policy answered; null without one. */
  witnesses: WitnessReport[] | null;
}

/** Requests in flight at once, and the size of a part (and so the largest object sent in one request): S3 allows 5 MiB to 5 GiB. */
export const PUBLISH_DEFAULTS = { concurrency: 16, partBytes: 16 * 1024 ** 2 } as const;

/**
 * Publishes the live build to object storage: every file of `builds/<id>/` but its per-record
 * tree (the packs, pack index, domain map, statement, index, change feeds, shard logs, log
 * checkpoint), its kept list as `builds/<id>/kept.json`, the key set as
 * `builds/<id>/merchant-verify-keys.json`, the manifest, then `live.json` naming the build. The
 * transparency log goes first: the tiles the builds added to `log/`, then the live build's
 * checkpoint as the log's head (`log/checkpoint`), before it is sent to any witness, so the next
 * build extends what the witnesses saw even if this one never goes live; with the quorum the head
 * is written again, cosigned. Short of it, the log then ends with the bucket's live build's
 * statement again, as the build signed it ahead ({@link leaveBucketLog}), so that build's answers
 * stay current. The log's verifier key goes beside the key set (the build's own
 * `log-checkpoint` is among its files).
 * Before it, each kept build the bucket lacks (no manifest there) goes up the same way, manifest
 * last, so every build the kept list names is in the bucket before `live.json` points at that
 * list; an earlier build's records are checked against the live build's key set, which keeps
 * their keys, so it needs none of its own. Readers follow `live.json`, so they see the old build
 * (and its list) or the new one, never a mix, and a publish interrupted anywhere before the last
 * write leaves the old build live. Objects go up `concurrency` requests at a time, a large one in
 * parts; one the bucket holds already (same length, same bytes) is not sent again, so a publish
 * run again after a failure sends only the rest, then the head, manifest and `live.json`.
 */
export async function uploadBuild(opts: UploadOptions): Promise<UploadSummary> {
  const started = performance.now();
  const published = publishedBuildsOf(opts.to, '--to');
  const live = await readLiveBuild(opts);
  const send = new ObjectSender(
    published,
    { concurrency: opts.concurrency ?? PUBLISH_DEFAULTS.concurrency, partBytes: opts.partBytes ?? PUBLISH_DEFAULTS.partBytes },
    opts.onProgress,
  );
  const upload = new Upload(opts, published, send);
  let earlier: BuildFiles[] = [];
  let witnessed: LogWitnessSummary | null = null;
  try {
    earlier = await keptBuildsTheBucketLacks(opts, published, live);
    for (const b of [...earlier, live]) await upload.count(b);
    // The log first: its tiles, then its head, so the checkpoint a witness is sent is never rolled back.
    for (const b of [...earlier, live]) await upload.putTiles(b.id);
    if (live.manifest.log) await upload.putHead(live.id);
  } catch (error) {
    throw failed(opts, send, error);
  }
  // Short of its quorum, nothing more goes up: the live build there stays, and the head, the sent
  // checkpoint, is followed by that build's statement again.
  if (opts.witnessing && live.manifest.log) {
    try {
      witnessed = await witnessLiveFolder(opts.witnessing, opts, opts.onWitness);
    } catch (error) {
      await upload.putHead(live.id);
      throw await leftLog(opts, published, live.id, error);
    }
    await upload.putHead(live.id);
  }
  try {
    for (const b of earlier) await upload.putBuild(b, await published.buildFileStates(b.id));
    await upload.putLiveBuild(live);
  } catch (error) {
    throw failed(opts, send, error);
  }
  const p = send.progress;
  return {
    to: opts.to.name,
    build: live.id,
    records: live.manifest.records,
    earlierBuilds: earlier.length,
    objects: p.objects,
    bytes: p.bytes,
    uploaded: p.uploaded,
    uploadedBytes: send.uploadedBytes,
    skipped: p.skipped,
    seconds: (performance.now() - started) / 1000,
    witnesses: witnessed?.witnesses ?? null,
  };
}

const failed = (opts: UploadOptions, send: ObjectSender, error: unknown) =>
  new BuildError(
    `publish to ${opts.to.name} failed after ${send.progress.objects} of ${send.progress.totalObjects} objects (${send.progress.uploaded} sent, ${send.progress.skipped} up already); the live build there is unchanged, and running it again sends only what is missing: ${(error as Error).message}`,
    { cause: error },
  );

/**
 * The failure of a publish whose witnessing failed (short of its quorum, or interrupted), once the
 * bucket's log ends with its live build's statement again ({@link leaveBucketLog}); when that
 * cannot be done, the failure says so, since until a publish succeeds a refresh would serve a
 * head that supersedes the bucket's live build.
 */
async function leftLog(opts: UploadOptions, published: PublishedBuilds, build: string, failure: unknown): Promise<unknown> {
  try {
    await leaveBucketLog(opts, published, build);
    return failure;
  } catch (error) {
    return new BuildError(
      `${(failure as Error)?.message ?? String(failure)}; the build did not go live in ${opts.to.name}, and the log there could not be ended with its live build's statement again: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** One publish's objects, in the order that keeps readers safe. */
class Upload {
  /** Each build's files, read once by {@link count}. */
  private readonly files = new Map<string, LocalFile[]>();
  /** The log's tiles the store holds, listed once. */
  private tilesThere: Map<string, StoredFile> | null = null;

  constructor(
    private readonly opts: UploadOptions,
    private readonly published: PublishedBuilds,
    private readonly send: ObjectSender,
  ) {}

  /** Counts a build's files (and its manifest) into the totals. */
  async count(b: BuildFiles): Promise<void> {
    const files = await localFiles(buildDirOf(this.opts, b.id), [...b.files, MANIFEST_FILE]);
    this.files.set(b.id, files);
    this.send.expect(
      files.length,
      files.reduce((n, f) => n + f.bytes, 0),
    );
  }

  /** A build's files (its log tiles are up already) but those the store holds whole, its manifest last. */
  async putBuild(b: BuildFiles, there: Map<string, StoredFile>): Promise<void> {
    const files = this.files.get(b.id)!;
    await this.send.putBuildFiles(
      b.id,
      files.filter((f) => f.path !== MANIFEST_FILE),
      there,
    );
    const manifest = files.find((f) => f.path === MANIFEST_FILE)!;
    const body = await readFile(manifest.file);
    await this.send.put(() => this.published.putBuildFile(b.id, MANIFEST_FILE, body), body.length);
  }

  /** The live build (its log tiles and head are up already): the log key, kept list and key set beside its files, its manifest, then `live.json`. */
  async putLiveBuild(live: LiveBuild): Promise<void> {
    const extras: [string, Buffer, string][] = [
      [BUILD_KEPT_OBJECT, Buffer.from(keptListText(live.kept)), 'application/json'],
      [BUILD_KEY_SET_OBJECT, live.keySetBytes, 'application/json'],
    ];
    if (live.manifest.log)
      extras.push([BUILD_LOG_VKEY_OBJECT, await readFile(join(this.opts.publicDir, LOG_VKEY_PATH)), 'text/plain; charset=utf-8']);
    const pointer = { build: live.id, published_at: (this.opts.now?.() ?? new Date()).toISOString(), records: live.manifest.records };
    const pointerBytes = Buffer.byteLength(`${JSON.stringify(pointer)}\n`);
    this.send.expect(
      extras.length + 1,
      extras.reduce((n, [, body]) => n + body.length, pointerBytes),
    );
    const there = await this.send.slot(() => this.published.buildFileStates(live.id));
    await this.send.each(extras, ([path, body, type]) => this.send.putBody(live.id, path, body, type, there.get(path)));
    await this.putBuild(live, there);
    await this.send.put(() => this.published.putLive(pointer), pointerBytes);
  }

  /**
   * The log's tiles a build added (from its manifest's entries), under `log/`: immutable, so they
   * go up first (but those up already); readers reach them only through a checkpoint (the head,
   * or a live build's).
   */
  async putTiles(id: string): Promise<void> {
    const log = (await manifestOf(this.opts, id)).log;
    if (!log) return;
    this.tilesThere ??= await this.send.slot(() => this.published.logTileStates());
    const there = this.tilesThere;
    const tiles = await localFiles(join(this.opts.publicDir, LOG_DIR), tilesAdded(log.from, log.to));
    this.send.expect(
      tiles.length,
      tiles.reduce((n, t) => n + t.bytes, 0),
    );
    await this.send.each(tiles, async (t) => {
      if (there.get(t.path)?.bytes === t.bytes) return this.send.skip(t.bytes);
      // Read in its slot: memory holds the tiles in flight, not all of them.
      await this.send.put(async () => this.published.putLogFile(t.path, await readFile(t.file)), t.bytes);
    });
  }

  /** The build's checkpoint (with the cosignatures it has so far) as the log's head, `log/checkpoint`. */
  async putHead(id: string): Promise<void> {
    const note = await readFile(join(buildDirOf(this.opts, id), BUILD_CHECKPOINT_FILE));
    this.send.expect(1, note.length);
    await this.send.put(() => this.published.putLogHead(note), note.length);
  }
}
