/**
 * The published log under a public folder as a build opens it (its checkpoint, checked against its
 * tiles, and its right edge), and the one entry a build that did not go live appends to it: the
 * live build's statement again, so the log's head ends with the statement of the build served.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Checkpoint, encodeBase64, equalBytes, formatCheckpoint, parseCheckpoint, statementEntry } from '#shared';
import { hasher, sha256 } from '../core/crypto/hash.ts';
import { LogInconsistentError } from '../core/errors/errors.ts';
import { writeAtomic } from '../core/files.ts';
import { LOG_CHECKPOINT, LOG_DIR } from '../core/layout.ts';
import { emptyEdge, type LogEdge, loadEdge, TileAppender, type TileSink } from '../core/tlog/appender.ts';
import { type TileFetch, TileTree } from '../core/tlog/tile-tree.ts';
import { type LogKey, openNoteWith, signNote } from '../keyring/log-key.ts';
import { folderTiles } from '../storage/log-tiles.ts';

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

/** The published log in `logDir` (see {@link openPublishedLog}). */
export async function openLogDir(logDir: string, key: LogKey, origin: string): Promise<PublishedLog> {
  const previous = await readPrevious(logDir, key, origin);
  if (!previous) return { logDir, previous, edge: emptyEdge() };
  const fetch = folderTiles(logDir);
  try {
    const root = await new TileTree(hasher, previous.size, fetch).root();
    if (!equalBytes(root, previous.root))
      throw new LogInconsistentError(`they give the root ${encodeBase64(root)}, not the checkpoint's ${encodeBase64(previous.root)}`);
    return { logDir, previous, edge: await loadEdge(hasher, previous.size, fetch) };
  } catch (error) {
    throw new LogInconsistentError(
      `the tiles in ${logDir} do not match its checkpoint (size ${previous.size}): ${(error as Error).message}; nothing was published`,
      { cause: error },
    );
  }
}

/** Writes a tile under `logDir`, making its folder once (`madeDirs` lists the folders made, for a discard). */
export function tileWriter(logDir: string, madeDirs: Set<string>): (path: string, bytes: Uint8Array) => void {
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
export async function appendStatementAgain(logDir: string, key: LogKey, origin: string, statement: Buffer): Promise<void> {
  const { previous, edge } = await openLogDir(logDir, key, origin);
  if (!previous) return;
  const head = await appendEntryAgain(
    { previous, edge },
    statementEntry(sha256, statement),
    { key, origin },
    tileWriter(logDir, new Set()),
    folderTiles(logDir),
  );
  await writeAtomic(join(logDir, LOG_CHECKPOINT), head);
}

/**
 * The one re-append: `entry` after the log `previous` ends with (its right edge `edge`), the new
 * tiles given to `sink`, and the new head signed by the log key; `tiles` must read them back. The
 * new tree must extend `previous`, or LOG_INCONSISTENT. A build signs the same step ahead for
 * `mvr publish`, which holds no log key (builder/log-if-not-live.ts).
 */
export async function appendEntryAgain(
  log: { previous: Checkpoint; edge: LogEdge },
  entry: Uint8Array,
  signer: { key: LogKey; origin: string },
  sink: TileSink,
  tiles: TileFetch,
): Promise<string> {
  const appender = new TileAppender(hasher, log.edge, sink);
  appender.append(entry);
  appender.finish();
  const tree = new TileTree(hasher, appender.size, tiles);
  const root = await tree.root();
  if (!(await tree.extends(log.previous, root)))
    throw new LogInconsistentError(`the log would not extend its checkpoint of size ${log.previous.size}; nothing was published`);
  return signNote(signer.key, formatCheckpoint({ origin: signer.origin, size: appender.size, root }));
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
