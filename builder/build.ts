import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { formatTimestamp } from '#shared';
import { BuildError, MvrError } from '../core/errors/errors.ts';
import { BUILD_STATEMENT_FILE, CURRENT_LINK } from '../core/layout.ts';
import { keyConfigSha256 } from '../core/ohttp.ts';
import { loadOhttpConfig } from '../keyring/ohttp-key.ts';
import { folderTiles } from '../storage/log-tiles.ts';
import { requireQuorum, type WitnessReport, witnessCheckpoint } from '../witness/build-phase/witnessing.ts';
import { existingBuild } from './build-id.ts';
import { type BuildInputs, readBuildInputs } from './build-inputs.ts';
import { appendToLog, type BuildIdentity, writeChangeFeeds, writeKeySet, writeManifest } from './build-outputs.ts';
import { buildSummary, keepBuilds, keptAfterSwap, publishCheckpoint } from './go-live.ts';
import { INDEX_THREAD_FROM, IndexThread } from './index-thread.ts';
import type { LogStep } from './log.ts';
import type { BuildOptions, BuildPhase, BuildSummary } from './options.ts';
import { packedRecords } from './packs.ts';
import { refuseDuplicates, type SignedRecords, signAudits } from './sign-audits.ts';
import { acquireBuildLock, createStaging, discardStaging, liveBuildId, swapInBuild } from './swap.ts';

export type { BuildOptions, BuildPhase, BuildProgress, BuildSummary } from './options.ts';

/** What a build must undo if it stops before going live: its staging folder and the tiles it appended. */
interface Undo {
  staging: string | null;
  logStep: LogStep | null;
  swapped: boolean;
}

/**
 * The monthly build: audits in, one canonical signed record per domain and the key set out.
 * All or nothing: records are written to a staging folder and swapped in only when every audit
 * was valid and every signature verified; on any problem the live build is left as it was.
 */
export async function runBuild(opts: BuildOptions): Promise<BuildSummary> {
  const started = performance.now();
  const undo: Undo = { staging: null, logStep: null, swapped: false };
  // Each phase is announced as it starts, and timed; until the swap, an abort (Ctrl-C) stops the build there.
  const clock = new PhaseClock();
  const phase = (name: BuildPhase) => {
    if (!undo.swapped) opts.signal?.throwIfAborted();
    clock.begin(name);
    opts.onPhase?.(name);
  };
  let release: () => Promise<void> = async () => undefined;
  try {
    release = await acquireBuildLock(opts.recordsDir);
    const inputs = await readBuildInputs(opts);
    const staging = (undo.staging = await createStaging(opts.recordsDir));
    const issuedAt = formatTimestamp(opts.now);
    phase('records');
    const records = await signAudits(opts, inputs.auditFiles, inputs.key, staging, issuedAt, started);
    phase('index');
    const indexed = await writeIndexAndMap(staging, opts, inputs, records, issuedAt, phase);
    // The same build again: it is live already, so no build is written, appended to the log or kept
    // twice; only what the options decide besides the build (the key set, how many builds are kept) is.
    if ('live' in indexed) return await sameBuildAgain(opts, inputs, records, indexed.build, started, indexed.packsSummary, clock);
    const { build, runs, domainMap, packed, packsSummary } = indexed;
    const changes = await writeChangeFeeds(staging, inputs.earlier, opts.recordsDir, phase);
    // The log reads the records back from the packs (it opens them as it first reads them).
    try {
      undo.logStep = await appendToLog(staging, runs, packed, inputs, opts, issuedAt, phase);
    } finally {
      packed.close();
    }
    const witnesses = await witnessBuild(undo.logStep, opts, inputs, phase);
    phase('key_set');
    await writeManifest(staging, opts, inputs, records, issuedAt, undo.logStep);
    // Key set first, then records: a record is never live before the key that verifies it.
    await writeKeySet(opts, inputs.keySetFile, inputs.keySet);
    phase('swap');
    const { buildDir, previous } = await swapInBuild(opts.recordsDir, staging, build.buildId);
    Object.assign(undo, { staging: null, swapped: true });
    const live = undo.logStep;
    undo.logStep = null;
    const log = await publishCheckpoint(live, build.buildId);
    const durationMs = performance.now() - started;
    clock.end();
    // Old builds go after the swap and outside the measured time: removing a million files
    // takes about as long as writing them, and no reader needs them any more.
    phase('prune');
    const { keptBuilds, prunedBuilds } = await keepBuilds(
      opts.recordsDir,
      await keptAfterSwap(opts.recordsDir, build.buildId, inputs),
      previous,
    );
    clock.end();
    const phasesMs = clock.phasesMs;
    const outcome = { durationMs, phasesMs, buildDir, keptBuilds, prunedBuilds, changes, domainMap, packs: packsSummary, log, witnesses };
    return buildSummary(opts, inputs, records, build, outcome);
  } catch (error) {
    // A build that failed before going live leaves the log as it was, or, once a witness saw its
    // entries, ends the log with the live build's statement again.
    const logLeft = undo.logStep ? await leaveLog(undo.logStep, opts.recordsDir, error) : null;
    throw logLeft ?? (await buildFailure(error, opts, undo.swapped));
  } finally {
    if (undo.staging) await discardStaging(undo.staging).catch(() => undefined);
    await release();
  }
}

/**
 * The index, packs, domain map and statement (in a thread of their own for a large build, ended
 * before the log so its heap is given back): the build's id, and where its records are for the
 * log; or, when the build is the live one already, only its id (no map is written).
 */
async function writeIndexAndMap(
  staging: string,
  opts: BuildOptions,
  inputs: BuildInputs,
  records: SignedRecords,
  issuedAt: string,
  phase: (name: BuildPhase) => void,
) {
  // Read here, so the thread loads no HPKE library to hash it.
  const ohttpConfig = await loadOhttpConfig(opts.keysDir);
  const thread = new IndexThread(
    {
      stagingDir: staging,
      records: records.written,
      packRecords: opts.packRecords,
      issuer: opts.issuer,
      schemaUrl: opts.schemaUrl,
      ohttpKeyConfigSha256: ohttpConfig ? keyConfigSha256(ohttpConfig) : null,
      key: inputs.key,
      issuedAt,
    },
    records.written >= (opts.indexThreadFrom ?? INDEX_THREAD_FROM),
  );
  try {
    const indexed = await thread.index();
    if (!('buildId' in indexed)) {
      await refuseDuplicates(inputs.auditFiles, new Set(indexed.duplicates));
      // Only when the audit files changed under the build, so that the twice-audited are no longer found there.
      throw new BuildError(`domains audited more than once: ${indexed.duplicates.slice(0, 5).join(', ')}`);
    }
    const { buildId, runs, packs, packsSummary } = indexed;
    const build: BuildIdentity = { buildId, issuedAt };
    if ((await existingBuild(opts.recordsDir, buildId)) === 'live') return { build, packsSummary, live: true as const };
    phase('map');
    const { domainMap, places } = await thread.map();
    return { build, runs, packsSummary, domainMap, packed: packedRecords(staging, packs, places) };
  } finally {
    await thread.close();
  }
}

/** The same build again: only the key set and the kept list are written, and builds no longer kept pruned. */
async function sameBuildAgain(
  opts: BuildOptions,
  inputs: BuildInputs,
  records: SignedRecords,
  build: BuildIdentity,
  started: number,
  packs: BuildSummary['packs'],
  clock: PhaseClock,
): Promise<BuildSummary> {
  await writeKeySet(opts, inputs.keySetFile, inputs.keySet);
  const { keptBuilds, prunedBuilds } = await keepBuilds(
    opts.recordsDir,
    inputs.keptBefore.slice(0, inputs.keep),
    inputs.keptBefore[1]?.id ?? null,
  );
  const durationMs = performance.now() - started;
  clock.end();
  const domainMap = { durationMs: 0, domains: records.written, bytes: records.written * 32 };
  return buildSummary(opts, inputs, records, build, {
    durationMs,
    phasesMs: clock.phasesMs,
    buildDir: null,
    keptBuilds,
    prunedBuilds,
    changes: 0,
    domainMap,
    packs,
    log: null,
    witnesses: null,
  });
}

/** The time each phase took, from its start to the next one's (or to the end). */
class PhaseClock {
  readonly phasesMs: Partial<Record<BuildPhase, number>> = {};
  private current: { name: BuildPhase; at: number } | null = null;

  begin(name: BuildPhase): void {
    this.end();
    this.current = { name, at: performance.now() };
  }

  end(): void {
    if (!this.current) return;
    const { name, at } = this.current;
    this.phasesMs[name] = (this.phasesMs[name] ?? 0) + performance.now() - at;
    this.current = null;
  }
}

/**
 * With a policy, the build's new checkpoint goes to its witnesses before the build goes live; short
 * of the quorum the build fails (WITNESS_QUORUM_NOT_MET), though the log keeps its entries.
 */
async function witnessBuild(
  step: LogStep | null,
  opts: BuildOptions,
  inputs: BuildInputs,
  phase: (name: BuildPhase) => void,
): Promise<WitnessReport[] | null> {
  const { witnessing, log } = inputs;
  if (!step || !witnessing || !log) return null;
  phase('witness');
  const witnessed = await step.witness((note) => witnessCheckpoint(witnessing, note, folderTiles(log.published.logDir)));
  for (const report of witnessed.witnesses) opts.onWitness?.(report);
  requireQuorum(witnessing, witnessed, `the build (log size ${step.summary.to})`);
  return witnessed.witnesses;
}

/**
 * The log after a build that did not go live (see LogStep.discard). A live statement that cannot be
 * appended again is the failure reported: until it is, the served checkpoint could show a build after
 * the live one, so its answers would be refused as superseded; building again appends it.
 */
async function leaveLog(step: LogStep, recordsDir: string, failure: unknown): Promise<BuildError | null> {
  try {
    const liveDir = await realpath(join(recordsDir, CURRENT_LINK)).catch(() => null);
    const statement = liveDir === null ? null : await readFile(join(liveDir, BUILD_STATEMENT_FILE)).catch(() => null);
    await step.discard(statement);
    return null;
  } catch (error) {
    return new BuildError(
      `${(failure as Error)?.message ?? String(failure)}; the build did not go live, and the live build's statement could not be appended to the log again: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** The error a failed build reports: INTERRUPTED for a signal before the swap, one coded BuildError for a file-system failure. */
async function buildFailure(error: unknown, opts: BuildOptions, swapped: boolean): Promise<unknown> {
  if (opts.signal?.aborted && !swapped) {
    const live = await liveBuildId(opts.recordsDir);
    // INTERRUPTED (exit 130): a signal, not a failure of the build itself.
    return new MvrError(
      'INTERRUPTED',
      `the build was interrupted (${String(opts.signal.reason)}) before it went live: nothing was published and its staging folder is removed; ${live ? `build ${live} stays live` : 'no build was live before it, and none is now'}`,
    );
  }
  // File-system failures (disk full, permissions, file too large) become one clear, coded
  // error; the live build was never touched.
  if (!(error instanceof MvrError) && typeof (error as NodeJS.ErrnoException)?.code === 'string') {
    return new BuildError(`cannot write the build: ${(error as Error).message}; the previous build is still live`, { cause: error });
  }
  return error;
}
