/**
 * Newest means last for a build published to a bucket (decision 0094): when `mvr publish` falls
 * short of its witness quorum, the bucket's log ends with the new build's statement while the
 * bucket's live build stays the old one, so the head a refresh gets cosigned would supersede
 * every answer that build gives. The folder build's rule (`appendStatementAgain`) applies: the
 * live build's statement is appended again. A publish holds no log key, so the build signs that
 * step ahead, from the log as it found it (whose last entry is the statement of the build live
 * then), and the publish checks it against the bucket's live build before it installs it.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Checkpoint, equalBytes, statementEntry } from '#shared';
import { hasher, sha256 } from '../core/crypto/hash.ts';
import { BuildError, LogInconsistentError } from '../core/errors/errors.ts';
import { writeAtomic } from '../core/files.ts';
import {
  BUILD_CHECKPOINT_FILE,
  BUILD_LOG_IF_NOT_LIVE_DIR,
  BUILD_STATEMENT_FILE,
  LOG_CHECKPOINT,
  LOG_DIR,
  LOG_VKEY_PATH,
} from '../core/layout.ts';
import { loadEdge, unbundle } from '../core/tlog/appender.ts';
import { type TileFetch, TileTree } from '../core/tlog/tile-tree.ts';
import { TILE_WIDTH, tilePath } from '../core/tlog/tiles.ts';
import { type LogKey, openCheckpoint, parseVkey } from '../keyring/log-key.ts';
import { folderTiles } from '../storage/log-tiles.ts';
import type { PublishedBuilds } from '../storage/store.ts';
import { buildDirOf, type UploadOptions } from './publish-plan.ts';
import { appendEntryAgain, type PublishedLog } from './published-log.ts';

/**
 * Writes `<buildDir>/log-if-not-live/`: the log after the build's entries (`built`, whose tiles are
 * in the log folder) with the last entry of the log as the build found it (`found`) appended
 * again, its new tiles and its head signed by the log key. Nothing for a log that was empty, or
 * whose last entry cannot be read from the folder and proven against its tiles.
 */
export async function signLogIfNotLive(found: PublishedLog, built: Checkpoint, buildDir: string, key: LogKey): Promise<void> {
  const entry = await lastEntry(found);
  if (!entry) return;
  const inLog = folderTiles(found.logDir);
  const added = new Map<string, Uint8Array>();
  const head = await appendEntryAgain(
    { previous: built, edge: await loadEdge(hasher, built.size, inLog) },
    entry,
    { key, origin: built.origin },
    (path, bytes) => void added.set(path, bytes),
    withTiles(added, inLog),
  );
  const dir = join(buildDir, BUILD_LOG_IF_NOT_LIVE_DIR);
  for (const [path, bytes] of added) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), bytes);
  }
  await writeFile(join(dir, LOG_CHECKPOINT), head);
}

/**
 * After `build`'s publish fell short of its quorum (its checkpoint is the bucket's head by then):
 * unless the bucket names no live build, or this one, its `log-if-not-live` becomes the log's head,
 * in the bucket and in the public folder the next build extends, once checked: signed by the
 * log's key, one entry more than the build's checkpoint and extending it, and that entry the
 * statement of the bucket's live build. Tiles go up before the head. Refused (nothing installed)
 * otherwise; the caller reports it with the publish's own failure.
 */
export async function leaveBucketLog(opts: UploadOptions, published: PublishedBuilds, build: string): Promise<string | null> {
  const bucketLive = await published.liveNow();
  if (!bucketLive || bucketLive === build) return null;
  const buildDir = buildDirOf(opts, build);
  const dir = join(buildDir, BUILD_LOG_IF_NOT_LIVE_DIR);
  const head = await readFile(join(dir, LOG_CHECKPOINT), 'utf8').catch(() => {
    throw new BuildError(`build ${build} has no ${join(dir, LOG_CHECKPOINT)} (made before builds signed one); build again`);
  });
  const statement = await opts.to.readFile(bucketLive, BUILD_STATEMENT_FILE);
  if (!statement) throw new BuildError(`build ${bucketLive}, live in ${opts.to.name}, has no ${BUILD_STATEMENT_FILE}`);
  const vkeyFile = join(opts.publicDir, LOG_VKEY_PATH);
  const vkey = parseVkey(await readFile(vkeyFile, 'utf8'), vkeyFile);
  const next = openCheckpoint(head, vkey, join(dir, LOG_CHECKPOINT));
  const builtFile = join(buildDir, BUILD_CHECKPOINT_FILE);
  const built = openCheckpoint(await readFile(builtFile, 'utf8'), vkey, builtFile);
  const added = await tilesIn(dir);
  const logDir = join(opts.publicDir, LOG_DIR);
  const tree = new TileTree(hasher, next.size, withTiles(added, folderTiles(logDir)));
  const [last] = next.size === built.size + 1 && next.origin === built.origin ? await tree.leafHashes(built.size, next.size) : [];
  const holds =
    last !== undefined &&
    equalBytes(await tree.root(), next.root) &&
    (await tree.extends(built, next.root)) &&
    equalBytes(last, hasher.leaf(statementEntry(sha256, statement)));
  if (!holds)
    throw new LogInconsistentError(
      `${dir} is not build ${build}'s log with the statement of ${bucketLive}, live in ${opts.to.name}, appended again`,
    );
  for (const [path, bytes] of added) {
    await mkdir(dirname(join(logDir, path)), { recursive: true });
    await writeFile(join(logDir, path), bytes);
    await published.putLogFile(path, Buffer.from(bytes));
  }
  await writeAtomic(join(logDir, LOG_CHECKPOINT), head);
  await published.putLogHead(Buffer.from(head));
  return bucketLive;
}

/** The log's last entry, from its entry bundle, proven the leaf its tiles hold; null for an empty log or one without it. */
async function lastEntry({ logDir, previous, edge }: PublishedLog): Promise<Uint8Array | null> {
  if (!previous || previous.size === 0) return null;
  const size = previous.size;
  let entry = edge.entries.at(-1);
  if (!entry) {
    // The last bundle is full: it is not part of the edge.
    const bytes = await readFile(join(logDir, tilePath({ level: 'entries', index: size / TILE_WIDTH - 1, width: TILE_WIDTH }))).catch(
      () => null,
    );
    try {
      entry = bytes ? unbundle(bytes).at(-1) : undefined;
    } catch {
      // A bundle whose lengths do not add up proves nothing: no entry, as without one.
    }
  }
  if (!entry) return null;
  const [leaf] = await new TileTree(hasher, size, folderTiles(logDir)).leafHashes(size - 1, size);
  return leaf && equalBytes(leaf, hasher.leaf(entry)) ? entry : null;
}

/** The tiles under `dir` (`tile/...`), by path. */
async function tilesIn(dir: string): Promise<Map<string, Uint8Array>> {
  const tiles = new Map<string, Uint8Array>();
  for (const e of await readdir(join(dir, 'tile'), { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const file = join(e.parentPath, e.name);
    tiles.set(
      file
        .slice(dir.length + 1)
        .split('\\')
        .join('/'),
      await readFile(file),
    );
  }
  return tiles;
}

/** Reads `added` first, then the log. */
const withTiles =
  (added: Map<string, Uint8Array>, log: TileFetch): TileFetch =>
  (tile, path) => {
    const bytes = added.get(path);
    return bytes ? Promise.resolve(bytes) : log(tile, path);
  };
