import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { parseCheckpoint, parseNote } from '@merchant-verify/verifier/tlog';
import { BuildError } from '../core/errors.ts';
import { writeAtomic } from '../core/files.ts';
import { BUILD_CHECKPOINT_FILE, CURRENT_LINK, LOG_CHECKPOINT, LOG_DIR } from '../core/layout.ts';
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
  const witnessed = await witnessCheckpoint(w, note, folderTiles(join(dirs.publicDir, LOG_DIR)));
  for (const r of witnessed.witnesses) onWitness?.(r);
  const written = [buildFile];
  await writeAtomic(buildFile, witnessed.checkpoint);
  const head = await readFile(logFile, 'utf8').catch(() => null);
  if (head !== null && sameCheckpoint(head, note)) {
    await writeAtomic(logFile, witnessed.checkpoint);
    written.push(logFile);
  }
  requireQuorum(w, witnessed, `the live checkpoint in ${buildDir}`);
  return { written, size: sizeOf(note), witnesses: witnessed.witnesses };
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
  const witnessed = await witnessCheckpoint(w, note, storeTiles(store));
  for (const r of witnessed.witnesses) onWitness?.(r);
  await published.putBuildFile(live, BUILD_CHECKPOINT_FILE, Buffer.from(witnessed.checkpoint), 'text/plain; charset=utf-8');
  const written = [`${store.name}/builds/${live}/${BUILD_CHECKPOINT_FILE}`];
  const head = await published.logHead();
  if (head && sameCheckpoint(head.toString('utf8'), note)) {
    await published.putLogHead(Buffer.from(witnessed.checkpoint));
    written.push(`${store.name}/${LOG_DIR}/${LOG_CHECKPOINT}`);
  }
  requireQuorum(w, witnessed, `the live checkpoint of ${store.name} (build ${live})`);
  return { written, size: sizeOf(note), witnesses: witnessed.witnesses };
}

/** Whether two notes are the same signed checkpoint text (their cosignatures aside). */
const sameCheckpoint = (a: string, b: string) => parseNote(a).text === parseNote(b).text;
const sizeOf = (note: string) => parseCheckpoint(parseNote(note).text).size;
