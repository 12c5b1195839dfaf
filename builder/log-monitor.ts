import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type TlogPolicy, verifyWitnessedCheckpoint, type Witnessed } from '@merchant-verify/verifier';
import { type Checkpoint, encodeBase64, type NoteVerifierKey, parseCheckpoint, parseNote } from '#shared';
import { hasher } from '../core/crypto/hash.ts';
import { ConfigError, LogInconsistentError, MvrError } from '../core/errors/errors.ts';
import { writeAtomic } from '../core/files.ts';
import { LOG_CHECKPOINT, LOG_DIR } from '../core/layout.ts';
import { partialPaths } from '../core/tlog/appender.ts';
import { type TileFetch, TileTree } from '../core/tlog/tile-tree.ts';
import { parseTilePath, TILE_WIDTH, tilePath } from '../core/tlog/tiles.ts';
import { openCheckpoint } from '../keyring/log-key.ts';

/** A published log as a monitor or a build reads it (a folder or a URL prefix): its checkpoint note and its tiles. */
export interface LogSource {
  checkpoint(): Promise<string>;
  tiles: TileFetch;
}

/** A checkpoint as text and where it came from (a file or URL), named in errors. */
export interface NamedText {
  text: string;
  from: string;
}

/** The log grew as it should: from the older checkpoint's size to the live one's, nothing before it changed. */
export interface LogGrowth {
  origin: string;
  from: number;
  to: number;
  /** The live root, base64. */
  root: string;
  /** The live checkpoint's note, for a monitor to keep for next time. */
  liveNote: string;
  /** With a witness policy: when the live checkpoint was last witnessed, and by whom. */
  witnessed?: Witnessed;
}

/** A witness policy the live checkpoint must hold under, the clock and an optional maximum age of its cosignatures. */
export interface LiveWitnessCheck {
  policy: TlogPolicy;
  now: number;
  maxAgeMs?: number;
}

/**
 * What a monitor runs each month: the live log (at `where`) must be an append-only extension of
 * an older checkpoint, by a consistency proof computed from the tiles. LOG_INCONSISTENT when it is
 * not; an older checkpoint that is not one of this log is bad input (INVALID_CHECKPOINT), never
 * evidence against the log. With `witness`, the live checkpoint must also be cosigned by the
 * policy's quorum (NOT_WITNESSED, BAD_COSIGNATURE... otherwise).
 */
export async function checkLogGrowth(
  log: LogSource,
  where: string,
  vkey: NoteVerifierKey,
  older: NamedText,
  witness?: LiveWitnessCheck,
): Promise<LogGrowth> {
  const old = openOlderCheckpoint(older.text, vkey, older.from);
  const liveNote = await log.checkpoint();
  const live = openCheckpoint(liveNote, vkey, `${where}/checkpoint`);
  if (live.size < old.size)
    throw new LogInconsistentError(
      `the live log has ${live.size} entries, fewer than the ${old.size} of ${older.from}: entries were removed`,
    );
  const consistent = await new TileTree(hasher, live.size, log.tiles).extends(old, live.root).catch((error: Error) => {
    throw new LogInconsistentError(`cannot compute the consistency proof from the tiles at ${where}: ${error.message}`);
  });
  if (!consistent)
    throw new LogInconsistentError(
      `the live log (size ${live.size}) is NOT an append-only extension of ${older.from} (size ${old.size}): an entry was rewritten or removed`,
    );
  const growth = { origin: live.origin, from: old.size, to: live.size, root: encodeBase64(live.root), liveNote };
  return witness ? { ...growth, witnessed: checkWitnessed(liveNote, vkey, `${where}/checkpoint`, witness) } : growth;
}

/** The live checkpoint under the policy. */
function checkWitnessed(note: string, vkey: NoteVerifierKey, where: string, witness: LiveWitnessCheck): Witnessed {
  const result = verifyWitnessedCheckpoint(note, witness.policy, { ...witness, logs: [vkey] });
  if (!result.valid) throw new MvrError(result.code, `${where}: ${result.message}`);
  return { witnessedAt: result.witnessedAt, cosigners: result.cosigners };
}

function openOlderCheckpoint(note: string, vkey: NoteVerifierKey, file: string): Checkpoint {
  try {
    return openCheckpoint(note, vkey, file);
  } catch (error) {
    throw new MvrError('INVALID_CHECKPOINT', `--checkpoint ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Copies a published log's checkpoint and right edge (its partial tiles) into `<publicDir>/log`,
 * so a build on a fresh machine (CI) can extend it. Only the checkpoint's text is read here: the
 * build opens it with the log key and checks the tiles against it.
 */
export async function pullLog(source: LogSource, publicDir: string): Promise<{ to: string; size: number; files: number }> {
  const target = join(publicDir, LOG_DIR);
  const note = await source.checkpoint();
  const { size } = parseCheckpoint(parseNote(note).text);
  const local = await readFile(join(target, LOG_CHECKPOINT), 'utf8').catch(() => null);
  if (local !== null && local !== note)
    throw new ConfigError(`${target} already holds another log checkpoint; pull into a public folder without one`);
  const paths = partialPaths(size);
  const put = async (path: string, bytes: Uint8Array) => {
    await mkdir(dirname(join(target, path)), { recursive: true });
    await writeAtomic(join(target, path), bytes);
  };
  for (const path of paths) await put(path, await source.tiles(parseTilePath(path)!, path));
  // The log's last entry (the live build's statement) is in the edge's bundle, or, the edge holding
  // none, in the last full one: the build signs its re-append ahead from it (builder/log-if-not-live.ts),
  // which checks it against the tiles. Without it that step is left out, and a publish says so.
  const last = size > 0 && size % TILE_WIDTH === 0 ? tilePath({ level: 'entries', index: size / TILE_WIDTH - 1, width: TILE_WIDTH }) : null;
  const lastBundle = last && (await source.tiles(parseTilePath(last)!, last).catch(() => null));
  if (last && lastBundle) await put(last, lastBundle);
  await writeAtomic(join(target, LOG_CHECKPOINT), note);
  return { to: target, size, files: paths.length + (lastBundle ? 2 : 1) };
}
