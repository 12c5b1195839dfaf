import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { encodeBase64, formatCheckpoint, statementEntry } from '#shared';
import { hasher, sha256 } from '../core/crypto/hash.ts';
import { LogInconsistentError } from '../core/errors/errors.ts';
import { writeAtomic } from '../core/files.ts';
import { BUILD_CHECKPOINT_FILE, BUILD_STATEMENT_FILE, INDEX_FILE, LOG_CHECKPOINT, SHARD_LOG_FILE } from '../core/layout.ts';
import { TileAppender } from '../core/tlog/appender.ts';
import { TileTree } from '../core/tlog/tile-tree.ts';
import { type LogKey, saltOf, signNote } from '../keyring/log-key.ts';
import { folderTiles } from '../storage/log-tiles.ts';
import type { ShardRun } from './changes.ts';
import { inDomainOrder } from './index-order.ts';
import { LineFile } from './line-file.ts';
import { signLogIfNotLive } from './log-if-not-live.ts';
import type { PackedRecords } from './packs.ts';
import { appendStatementAgain, type PublishedLog, tileWriter } from './published-log.ts';
import { removeEmptyFolders } from './swap.ts';

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
  /** The build's records by index line, as its packs hold them: the bytes the log commits to are the ones served. */
  records: PackedRecords;
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
      for (const { shard, domain, line } of inDomainOrder(join(opts.buildDir, INDEX_FILE), opts.runs)) {
        const bytes = opts.records.bytes(line);
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
    // Signed ahead for a publish that falls short of its quorum: it holds no log key.
    await signLogIfNotLive(opts.log, { origin: opts.origin, size: appender.size, root }, opts.buildDir, opts.key);
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

/** The per-shard `log.jsonl` files, each written through a buffer of its own (see LineFile). */
class ShardLogs {
  private readonly open = new Map<string, LineFile>();
  constructor(private readonly buildDir: string) {}
  add(shard: string, line: string): void {
    let out = this.open.get(shard);
    if (!out) {
      // The shard's folder holds only this file unless the build keeps its per-record tree.
      mkdirSync(join(this.buildDir, shard), { recursive: true });
      out = new LineFile(join(this.buildDir, shard, SHARD_LOG_FILE));
      this.open.set(shard, out);
    }
    out.write(line);
  }
  close(): void {
    for (const out of this.open.values()) out.close();
    this.open.clear();
  }
}
