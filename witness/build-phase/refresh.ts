import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { equalBytes, parseCheckpoint, parseNote, statementEntry } from '#shared';
import { hasher, sha256 } from '../../core/crypto/hash.ts';
import { BuildError, NotFreshlyWitnessedError, WitnessQuorumNotMetError } from '../../core/errors/errors.ts';
import { writeAtomic } from '../../core/files.ts';
import {
  BUILD_CHECKPOINT_FILE,
  BUILD_SERVED_CHECKPOINT_FILE,
  BUILD_STATEMENT_FILE,
  CURRENT_LINK,
  LOG_CHECKPOINT,
  LOG_DIR,
} from '../../core/layout.ts';
import { type TileFetch, TileTree } from '../../core/tlog/tile-tree.ts';
import { folderTiles, storeTiles } from '../../storage/log-tiles.ts';
import { publishedBuildsOf, type Store } from '../../storage/store.ts';
import { type Cosigned, type Witnessing, type WitnessReport, witnessCheckpoint } from './witnessing.ts';

/**
 * Witnessing the live checkpoint again (`mvr log witness`, and `mvr publish` before it uploads):
 * a witness re-cosigns a checkpoint it has seen with a fresh timestamp, so the checkpoint served
 * stays provably current. The checkpoint's text never changes, only its cosignature lines. A
 * refresh whose served checkpoint did not get a quorum of fresh cosignatures fails, so a scheduled
 * job alerts.
 */

export interface LogWitnessSummary {
  /** Where the cosigned checkpoint was written (the log's head, and the live build's own or served checkpoint). */
  written: string[];
  size: number;
  witnesses: WitnessReport[];
}

/**
 * The live build of a records folder: its checkpoint (`<build>/log-checkpoint`, which its record
 * proofs carry) and the log's (`public/log/checkpoint`); after a build short of its quorum the
 * log's is newer, and once cosigned by the quorum it is written as `<build>/served-checkpoint`.
 */
export async function witnessLiveFolder(
  w: Witnessing,
  dirs: { recordsDir: string; publicDir: string },
  onWitness?: (r: WitnessReport) => void,
): Promise<LogWitnessSummary> {
  const buildDir = await realpath(join(dirs.recordsDir, CURRENT_LINK)).catch(() => {
    throw new BuildError(`no live build in ${dirs.recordsDir} (run "mvr build" first)`);
  });
  const buildFile = join(buildDir, BUILD_CHECKPOINT_FILE);
  const logFile = join(dirs.publicDir, LOG_DIR, LOG_CHECKPOINT);
  const note = await readFile(buildFile, 'utf8').catch(() => {
    throw new BuildError(`the live build ${buildDir} has no log checkpoint (it was built without a log key)`);
  });
  return witnessLive(
    w,
    {
      what: `the live checkpoint in ${buildDir}`,
      note,
      tiles: folderTiles(join(dirs.publicDir, LOG_DIR)),
      putBuild: (text) => writeAtomic(buildFile, text).then(() => buildFile),
      putServed: (text) =>
        writeAtomic(join(buildDir, BUILD_SERVED_CHECKPOINT_FILE), text).then(() => join(buildDir, BUILD_SERVED_CHECKPOINT_FILE)),
      head: () => readFile(logFile, 'utf8').catch(() => null),
      putHead: (text) => writeAtomic(logFile, text).then(() => logFile),
      statement: () => readFile(join(buildDir, BUILD_STATEMENT_FILE)).catch(() => null),
    },
    onWitness,
  );
}

/**
 * The live build of a bucket: its `builds/<id>/log-checkpoint` object, which the gateways serve in
 * record proofs (they read it again at their next refresh), and the log's head (`log/checkpoint`,
 * served at `/log/checkpoint`) while that is the same checkpoint, as in a folder. The one object
 * of a published build that is ever rewritten, and only with more cosignature lines.
 */
export async function witnessLiveBucket(w: Witnessing, store: Store, onWitness?: (r: WitnessReport) => void): Promise<LogWitnessSummary> {
  const published = publishedBuildsOf(store, '--to');
  const live = await published.liveNow();
  if (!live) throw new BuildError(`nothing is published in ${store.name} yet (run "mvr publish" first)`);
  const note = (await store.readFile(live, BUILD_CHECKPOINT_FILE))?.toString('utf8');
  if (!note) throw new BuildError(`build ${live}, live in ${store.name}, has no log checkpoint (it was built without a log key)`);
  return witnessLive(
    w,
    {
      what: `the live checkpoint of ${store.name} (build ${live})`,
      note,
      tiles: storeTiles(store),
      putBuild: (text) =>
        published
          .putBuildFile(live, BUILD_CHECKPOINT_FILE, Buffer.from(text), 'text/plain; charset=utf-8')
          .then(() => `${store.name}/builds/${live}/${BUILD_CHECKPOINT_FILE}`),
      putServed: (text) =>
        published
          .putBuildFile(live, BUILD_SERVED_CHECKPOINT_FILE, Buffer.from(text), 'text/plain; charset=utf-8')
          .then(() => `${store.name}/builds/${live}/${BUILD_SERVED_CHECKPOINT_FILE}`),
      head: async () => (await published.logHead())?.toString('utf8') ?? null,
      putHead: (text) => published.putLogHead(Buffer.from(text)).then(() => `${store.name}/${LOG_DIR}/${LOG_CHECKPOINT}`),
      statement: () => store.readFile(live, BUILD_STATEMENT_FILE),
    },
    onWitness,
  );
}

/** A live checkpoint where it is kept: the live build's copy and the log's head, each written with the fresh cosignatures. */
interface LiveCheckpoint {
  /** What it is, for the quorum errors. */
  what: string;
  /** The live build's own checkpoint as it is now. */
  note: string;
  tiles: TileFetch;
  /** Writes the live build's own checkpoint; resolves with where. */
  putBuild(text: string): Promise<string>;
  /** Writes the checkpoint the live build's proofs are served against (the newer head, cosigned by the quorum). */
  putServed(text: string): Promise<string>;
  /** The log's head; null when there is none. */
  head(): Promise<string | null>;
  putHead(text: string): Promise<string>;
  /** The live build's statement file; null for a build without one. */
  statement(): Promise<Buffer | null>;
}

/**
 * The one refresh. What is served is the newest checkpoint the witnesses hold, the log's head:
 * after a build short of its quorum it is newer than the live build's own checkpoint, and a
 * witness that cosigned it refuses the older one as smaller, so the head is what goes to the
 * witnesses; it holds every entry of the live build (the log only grows), and it ends with the live
 * build's statement again ({@link endsWithLive}; a head that does not is left alone). Its cosigned copy is
 * written back as the head and, once it has the quorum, as the live build's served checkpoint
 * (its proofs are then against it). While the newer head lacks the quorum the live build's own
 * checkpoint is refreshed too, by the witnesses that have not seen the head, and stays what is
 * served. Then WITNESS_QUORUM_NOT_MET when what is served falls short even with earlier
 * cosignatures, NOT_FRESHLY_WITNESSED when only the fresh ones fall short: what was received is
 * written first, and the summary comes with the error.
 */
async function witnessLive(w: Witnessing, live: LiveCheckpoint, onWitness?: (r: WitnessReport) => void): Promise<LogWitnessSummary> {
  const head = await live.head();
  const newer =
    head !== null && !sameCheckpoint(head, live.note) && extendsBuild(head, live.note) && (await endsWithLive(head, live)) ? head : null;
  const written: string[] = [];
  let served: Cosigned;
  if (newer) {
    const round = await witnessCheckpoint(w, newer, live.tiles);
    written.push(await live.putHead(round.checkpoint));
    if (round.quorum) {
      written.push(await live.putServed(round.checkpoint));
      served = round;
    } else {
      served = await witnessCheckpoint(w, live.note, live.tiles);
      written.push(await live.putBuild(served.checkpoint));
    }
  } else {
    served = await witnessCheckpoint(w, live.note, live.tiles);
    written.push(await live.putBuild(served.checkpoint));
    if (head !== null && sameCheckpoint(head, live.note)) written.push(await live.putHead(served.checkpoint));
  }
  for (const r of served.witnesses) onWitness?.(r);
  const summary = { written, size: sizeOf(served.checkpoint), witnesses: served.witnesses };
  requireFreshQuorum(w, served, live.what, summary);
  return summary;
}

/** WITNESS_QUORUM_NOT_MET or NOT_FRESHLY_WITNESSED (carrying the summary), unless the fresh cosignatures meet the quorum. */
function requireFreshQuorum(w: Witnessing, served: Cosigned, what: string, summary: LogWitnessSummary): void {
  if (served.freshQuorum) return;
  const failed = served.witnesses.filter((r) => !r.ok).map((r) => r.message ?? r.witness);
  const error = served.quorum
    ? new NotFreshlyWitnessedError(
        `${what} (size ${summary.size}): too few witnesses of ${w.file} cosigned it afresh (${failed.join('; ')}); it is served with earlier cosignatures, which age`,
      )
    : new WitnessQuorumNotMetError(`${what} (size ${summary.size}): short of the quorum of ${w.file} (${failed.join('; ')})`);
  throw Object.assign(error, { summary });
}

/** Whether two notes are the same signed checkpoint text (their cosignatures aside). */
const sameCheckpoint = (a: string, b: string) => parseNote(a).text === parseNote(b).text;
const sizeOf = (note: string) => parseCheckpoint(parseNote(note).text).size;

/**
 * Whether the head's last entry is the live build's statement (newest means last, decision 0077),
 * so that serving it keeps the live build's answers current. A head that ends otherwise (a build or
 * publish that did not go live, and could not append the live statement again) is not served: the
 * live build's own checkpoint is refreshed instead. A build without a statement file is not judged.
 */
async function endsWithLive(head: string, live: LiveCheckpoint): Promise<boolean> {
  const statement = await live.statement();
  if (!statement) return true;
  const size = sizeOf(head);
  const [last] = await new TileTree(hasher, size, live.tiles).leafHashes(size - 1, size);
  return last !== undefined && equalBytes(last, hasher.leaf(statementEntry(sha256, statement)));
}

/** Whether the head is of the build's log and at least as large (so it holds every entry of the build). */
function extendsBuild(head: string, build: string): boolean {
  const [h, b] = [parseCheckpoint(parseNote(head).text), parseCheckpoint(parseNote(build).text)];
  return h.origin === b.origin && h.size > b.size;
}

/** The summary a refresh's failure carries (what was written, and each witness's answer), for `--json`. */
export const summaryOf = (error: unknown): LogWitnessSummary | null => (error as { summary?: LogWitnessSummary })?.summary ?? null;
