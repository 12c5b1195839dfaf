import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { parseCheckpoint, parseNote } from '@merchant-verify/verifier/internal/tlog';
import { BuildError } from '../core/errors.ts';
import { writeAtomic } from '../core/files.ts';
import { BUILD_CHECKPOINT_FILE, CURRENT_LINK, LOG_CHECKPOINT, LOG_DIR } from '../core/layout.ts';
import type { TileFetch } from '../core/tlog/tile-tree.ts';
import { publishedBuildsOf, type Store, storeTiles } from '../storage/store.ts';
import { folderTiles } from './tiles.ts';
import { requireQuorum, type Witnessing, type WitnessReport, witnessCheckpoint } from './witnessing.ts';

/**
 * Witnessing the live checkpoint again (`mvr log witness`, and `mvr publish` before it uploads):
 * a witness re-cosigns a checkpoint it has seen with a fresh timestamp, so the checkpoint served
 * stays provably current. The checkpoint's text never changes, only its cosignature lines.
 */

export interface LogWitnessSummary {
  /** Where the cosigned checkpoint was written (the live build's, and the log's when it is the same). */
  written: string[];
  size: number;
  witnesses: WitnessReport[];
}

/**
 * The live build of a records folder: its checkpoint (`<build>/log-checkpoint`, which its record
 * proofs carry) and the log's (`public/log/checkpoint`) while that is the same checkpoint (after
 * a build short of its quorum, the log's is newer: it is left as it is). WITNESS_QUORUM_NOT_MET
 * when the cosignatures, fresh or kept, fall short; what was received is written first.
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
      head: () => readFile(logFile, 'utf8').catch(() => null),
      putHead: (text) => writeAtomic(logFile, text).then(() => logFile),
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
      head: async () => (await published.logHead())?.toString('utf8') ?? null,
      putHead: (text) => published.putLogHead(Buffer.from(text)).then(() => `${store.name}/${LOG_DIR}/${LOG_CHECKPOINT}`),
    },
    onWitness,
  );
}

/** A live checkpoint where it is kept: the live build's copy and the log's head, each written with the fresh cosignatures. */
interface LiveCheckpoint {
  /** What it is, for the quorum error. */
  what: string;
  /** The live build's checkpoint as it is now. */
  note: string;
  tiles: TileFetch;
  /** Writes the live build's copy; resolves with where. */
  putBuild(text: string): Promise<string>;
  /** The log's head; null when there is none. */
  head(): Promise<string | null>;
  putHead(text: string): Promise<string>;
}

/**
 * The one refresh: the checkpoint re-submitted, the live build's copy rewritten with what came back,
 * the log's head too while it is the same checkpoint (after a build short of its quorum the head
 * is newer, and left as it is), then WITNESS_QUORUM_NOT_MET if the cosignatures, fresh or kept,
 * fall short: what was received is written first.
 */
async function witnessLive(w: Witnessing, live: LiveCheckpoint, onWitness?: (r: WitnessReport) => void): Promise<LogWitnessSummary> {
  const witnessed = await witnessCheckpoint(w, live.note, live.tiles);
  for (const r of witnessed.witnesses) onWitness?.(r);
  const written = [await live.putBuild(witnessed.checkpoint)];
  const head = await live.head();
  if (head !== null && sameCheckpoint(head, live.note)) written.push(await live.putHead(witnessed.checkpoint));
  requireQuorum(w, witnessed, live.what);
  return { written, size: sizeOf(live.note), witnesses: witnessed.witnesses };
}

/** Whether two notes are the same signed checkpoint text (their cosignatures aside). */
const sameCheckpoint = (a: string, b: string) => parseNote(a).text === parseNote(b).text;
const sizeOf = (note: string) => parseCheckpoint(parseNote(note).text).size;
