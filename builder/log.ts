import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  type Checkpoint,
  encodeBase64,
  equalBytes,
  formatCheckpoint,
  parseCheckpoint,
  statementEntry,
} from '@merchant-verify/verifier/internal/tlog';
import { LogInconsistentError } from '../core/errors.ts';
import { writeAtomic } from '../core/files.ts';
import { hasher, sha256 } from '../core/hash.ts';
import { BUILD_CHECKPOINT_FILE, BUILD_STATEMENT_FILE, INDEX_FILE, LOG_CHECKPOINT, LOG_DIR, SHARD_LOG_FILE } from '../core/layout.ts';
import { emptyEdge, type LogEdge, loadEdge, TileAppender } from '../core/tlog/appender.ts';
import { TileTree } from '../core/tlog/tile-tree.ts';
import { type LogKey, openNoteWith, saltOf, signNote } from '../keyring/log-key.ts';
import type { ShardRun } from './changes.ts';
import { inDomainOrder } from './index-order.ts';
import { removeEmptyFolders } from './swap.ts';
import { folderTiles } from './tiles.ts';

/** What the build's log step did, for its summary. */
export interface LogSummary {
  origin: string;
  /** Log size before and after this build. */
  from: number;
  to: number;
  /** The index of the build statement's entry, the last of this build's (`to - 1`). */
  statement: number;
  tiles: number;
  bytes: number;
  durationMs: number;
}

export interface LogStep {
  summary: LogSummary;
  /** Publishes the new checkpoint (after the build is live). */
  publish(): Promise<void>;
  /**
   * Has the checkpoint cosigned (`send` returns it with the cosignatures, as `checkpoint`): first it becomes the
   * log's checkpoint, so from then on the log keeps this build's entries whatever becomes of the
   * build (a witness refuses a log that rolls back); the cosigned one then replaces it there and
   * in the build.
   */
  witness<T extends { checkpoint: string }>(send: (checkpoint: string) => Promise<T>): Promise<T>;
  /**
   * The build failed before going live: removes the tiles it wrote, unless its checkpoint went to a
   * witness. Then the log keeps its entries, and the live build's statement (`liveStatement`, its
   * file's bytes; null when no build is live) is appended again as the log's last entry, so the
   * head a refresh gets cosigned still ends with the statement of the build that is served.
   */
  discard(liveStatement: Buffer | null): Promise<void>;
}

/** The published log as a build found it: its checkpoint (null before the first build) and right edge. */
export interface PublishedLog {
  logDir: string;
  previous: Checkpoint | null;
  edge: LogEdge;
}

/**
 * Opens the published log under `publicDir`: it must match its checkpoint (signed by this key, of
 * this origin, its tiles giving its root), or LOG_INCONSISTENT. The build opens it before it reads
 * a single audit, so a log it would refuse is refused at once, not after every record is signed.
 */
export async function openPublishedLog(publicDir: string, key: LogKey, origin: string): Promise<PublishedLog> {
  return openLogDir(join(publicDir, LOG_DIR), key, origin);
}

async function openLogDir(logDir: string, key: LogKey, origin: string): Promise<PublishedLog> {
  const previous = await readPrevious(logDir, key, origin);
  if (!previous) return { logDir, previous, edge: emptyEdge() };
  const fetch = folderTiles(logDir);
  try {
    const root = await new TileTree(hasher, previous.size, fetch).root();
    if (!equalBytes(root, previous.root))
      throw new Error(`they give the root ${encodeBase64(root)}, not the checkpoint's ${encodeBase64(previous.root)}`);
    return { logDir, previous, edge: await loadEdge(hasher, previous.size, fetch) };
  } catch (error) {
    throw new LogInconsistentError(
      `the tiles in ${logDir} do not match its checkpoint (size ${previous.size}): ${(error as Error).message}; nothing was published`,
      { cause: error },
    );
  }
}

/**
 * Appends every record of a staged build to the published log (opened by {@link openPublishedLog}
 * under the build's lock), in domain order: entry `SHA-256(salt || record bytes)`; then the build
 * statement (`statementEntry` of the statement file's bytes), so the checkpoint the build
 * publishes ends with it. The statement is written before (it signs the domain map, not the
 * checkpoint), so nothing here refers to itself. Only the log's
 * right edge and one index line a shard are held in memory. The new tree must prove consistent
 * with the old checkpoint, or the build fails with LOG_INCONSISTENT and the log is left as it was.
 * The new checkpoint goes into the build (its proofs are against it) and is published by
 * {@link LogStep.publish} once the build is live.
 */
export async function appendBuildToLog(opts: {
  log: PublishedLog;
  buildDir: string;
  runs: ShardRun[];
  key: LogKey;
  origin: string;
  issuedAt: string;
  signal?: AbortSignal | undefined;
}): Promise<LogStep> {
  const started = performance.now();
  const { logDir, previous, edge } = opts.log;
  const fetch = folderTiles(logDir);
  const madeDirs = new Set<string>();
  const appender = new TileAppender(hasher, edge, tileWriter(logDir, madeDirs));
  const discard = async () => {
    for (const path of appender.written) await rm(join(logDir, path), { force: true });
    for (const dir of [...madeDirs].sort((a, b) => b.length - a.length)) await removeEmptyFolders(dir, logDir);
  };
  try {
    const shardLogs = new ShardLogs(opts.buildDir);
    try {
      for (const { shard, domain } of inDomainOrder(join(opts.buildDir, INDEX_FILE), opts.runs)) {
        const bytes = readFileSync(join(opts.buildDir, shard, `${domain}.json`));
        const salt = saltOf(opts.key, opts.issuedAt, domain);
        shardLogs.add(shard, `${JSON.stringify({ domain, index: appender.size, salt: encodeBase64(salt) })}\n`);
        appender.append(sha256(Buffer.concat([salt, bytes])));
        // A turn of the event loop now and then, so the build's progress line keeps coming and Ctrl-C is heard.
        if (appender.size % 8192 === 0) await nextTurn().then(() => opts.signal?.throwIfAborted());
      }
    } finally {
      shardLogs.close();
    }
    const statement = appender.size;
    appender.append(statementEntry(sha256, readFileSync(join(opts.buildDir, BUILD_STATEMENT_FILE))));
    appender.finish();

    const tree = new TileTree(hasher, appender.size, fetch);
    const root = await tree.root();
    if (previous && !(await tree.extends(previous, root))) {
      throw new LogInconsistentError(`the log would not extend its checkpoint of size ${previous.size}; nothing was published`);
    }
    let checkpoint = signNote(opts.key, formatCheckpoint({ origin: opts.origin, size: appender.size, root }));
    writeFileSync(join(opts.buildDir, BUILD_CHECKPOINT_FILE), checkpoint);
    let sent = false;
    return {
      summary: {
        origin: opts.origin,
        from: previous?.size ?? 0,
        to: appender.size,
        statement,
        tiles: appender.written.length,
        bytes: appender.bytesWritten,
        durationMs: performance.now() - started,
      },
      publish: () => writeAtomic(join(logDir, LOG_CHECKPOINT), checkpoint),
      witness: async (send) => {
        sent = true;
        await writeAtomic(join(logDir, LOG_CHECKPOINT), checkpoint);
        const cosigned = await send(checkpoint);
        checkpoint = cosigned.checkpoint;
        writeFileSync(join(opts.buildDir, BUILD_CHECKPOINT_FILE), checkpoint);
        await writeAtomic(join(logDir, LOG_CHECKPOINT), checkpoint);
        return cosigned;
      },
      discard: async (liveStatement) => {
        // Tiles left behind are beyond every checkpoint; failing to remove them is not the build's failure.
        if (!sent) await discard().catch(() => undefined);
        else if (liveStatement) await appendStatementAgain(logDir, opts.key, opts.origin, liveStatement);
      },
    };
  } catch (error) {
    await discard();
    throw error;
  }
}

/** Writes a tile under `logDir`, making its folder once (`madeDirs` lists the folders made, for a discard). */
function tileWriter(logDir: string, madeDirs: Set<string>): (path: string, bytes: Uint8Array) => void {
  return (path, bytes) => {
    const file = join(logDir, path);
    const dir = dirname(file);
    if (!madeDirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      madeDirs.add(dir);
    }
    writeFileSync(file, bytes);
  };
}

/**
 * Appends a statement's entry once more and publishes the new head, signed by the log key. Newest
 * means last (decision 0077): a verifier refuses a statement that is not its checkpoint's last
 * entry, so after a build whose entries the log keeps but which did not go live, the live build's
 * statement is appended again; the same entry twice in a list of hashes is harmless. The head is
 * not cosigned here: the next refresh (`mvr log witness`) has it cosigned and served.
 */
async function appendStatementAgain(logDir: string, key: LogKey, origin: string, statement: Buffer): Promise<void> {
  const { previous, edge } = await openLogDir(logDir, key, origin);
  if (!previous) return;
  const appender = new TileAppender(hasher, edge, tileWriter(logDir, new Set()));
  appender.append(statementEntry(sha256, statement));
  appender.finish();
  const tree = new TileTree(hasher, appender.size, folderTiles(logDir));
  const root = await tree.root();
  if (!(await tree.extends(previous, root)))
    throw new LogInconsistentError(`the log would not extend its checkpoint of size ${previous.size}; nothing was published`);
  await writeAtomic(join(logDir, LOG_CHECKPOINT), signNote(key, formatCheckpoint({ origin, size: appender.size, root })));
}

/** The published checkpoint, opened with the log key; null for a log not started. */
async function readPrevious(logDir: string, key: LogKey, origin: string): Promise<Checkpoint | null> {
  const file = join(logDir, LOG_CHECKPOINT);
  const note = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (note === null) {
    // Tiles without a checkpoint: starting over would rewrite published tiles.
    const tiles = await readdir(join(logDir, 'tile')).catch(() => []);
    if (tiles.length > 0)
      throw new LogInconsistentError(`${logDir} has tiles but no checkpoint; restore ${file} rather than start the log again`);
    return null;
  }
  let checkpoint: Checkpoint;
  try {
    checkpoint = parseCheckpoint(openNoteWith(note, key.verifierKey));
  } catch (error) {
    throw new LogInconsistentError(`${file} is not a checkpoint signed by this log key (${key.vkey}): ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (checkpoint.origin !== origin)
    throw new LogInconsistentError(`${file} is the checkpoint of "${checkpoint.origin}", not of "${origin}"`);
  return checkpoint;
}

/** The per-shard `log.jsonl` files, written a few kilobytes at a time. */
class ShardLogs {
  private readonly open = new Map<string, { fd: number; pending: string }>();
  constructor(private readonly buildDir: string) {}
  add(shard: string, line: string): void {
    let out = this.open.get(shard);
    if (!out) {
      out = { fd: openSync(join(this.buildDir, shard, SHARD_LOG_FILE), 'w'), pending: '' };
      this.open.set(shard, out);
    }
    out.pending += line;
    if (out.pending.length >= 8192) {
      writeSync(out.fd, out.pending);
      out.pending = '';
    }
  }
  close(): void {
    for (const out of this.open.values()) {
      if (out.pending) writeSync(out.fd, out.pending);
      closeSync(out.fd);
    }
    this.open.clear();
  }
}
