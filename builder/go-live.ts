import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BuildError } from '../core/errors/errors.ts';
import { BUILDS_DIR } from '../core/layout.ts';
import { type KeptBuild, keptEntry, writeKept } from '../storage/kept-builds.ts';
import type { BuildInputs } from './build-inputs.ts';
import type { BuildIdentity } from './build-outputs.ts';
import type { LogStep } from './log.ts';
import type { BuildOptions, BuildSummary } from './options.ts';
import type { SignedRecords } from './sign-audits.ts';
import { pruneBuilds } from './swap.ts';

/** What a build's summary takes from its last steps; a null `buildDir` is the same build again (nothing written). */
export type BuildOutcome = Pick<
  BuildSummary,
  'durationMs' | 'phasesMs' | 'keptBuilds' | 'prunedBuilds' | 'changes' | 'domainMap' | 'packs' | 'log' | 'witnesses'
> & {
  buildDir: string | null;
};

/**
 * The build is live from here: its checkpoint's tiles must stay even if publishing the
 * checkpoint fails (the next build then extends the log from the last published checkpoint).
 */
export async function publishCheckpoint(live: LogStep | null, buildId: string): Promise<LogStep['summary'] | null> {
  await live?.publish().catch((error: Error) => {
    throw new BuildError(
      `build ${buildId} is live, but the log's checkpoint could not be published: ${error.message}; build again to publish one`,
      { cause: error },
    );
  });
  return live?.summary ?? null;
}

/** Lists the kept builds and removes the rest, except `previous` (readers in flight may still read it); the builds kept and pruned. */
export async function keepBuilds(
  recordsDir: string,
  kept: KeptBuild[],
  previous: string | null,
): Promise<{ keptBuilds: number; prunedBuilds: number }> {
  await writeKept(recordsDir, kept);
  const pruned = await pruneBuilds(recordsDir, [...kept.map((b) => b.id), previous]);
  return { keptBuilds: kept.length, prunedBuilds: pruned.length };
}

/** After the swap: the new build first in the kept list, then the earlier ones it keeps. */
export async function keptAfterSwap(recordsDir: string, buildId: string, inputs: BuildInputs): Promise<KeptBuild[]> {
  return [await keptEntry(recordsDir, buildId), ...inputs.earlier];
}

/** The summary of a build, from what every step reported. */
export function buildSummary(
  opts: BuildOptions,
  inputs: BuildInputs,
  records: SignedRecords,
  build: BuildIdentity,
  outcome: BuildOutcome,
): BuildSummary {
  return {
    buildId: build.buildId,
    unchanged: outcome.buildDir === null,
    records: records.written,
    byStatus: records.byStatus,
    byTier: records.byTier,
    signed: inputs.key !== null,
    keyId: inputs.key?.kid ?? null,
    publishedKeyIds: inputs.keySet.keys.map((k) => k.kid),
    issuedAt: build.issuedAt,
    files: inputs.auditFiles.length,
    workers: records.workers,
    recordsPerSecond: records.written / (outcome.durationMs / 1000),
    keySetFile: inputs.keySetFile,
    ...outcome,
    buildDir: outcome.buildDir ?? join(opts.recordsDir, BUILDS_DIR, build.buildId),
    peakRssMb: peakRssMb(),
  };
}

/**
 * The process's own peak resident memory, workers included (MB). On Linux this is VmHWM, the
 * high-water mark of this program's memory. getrusage's maxRSS is not: it keeps the parent's
 * resident size from the fork before exec, so a build started by a large parent (a benchmark
 * holding a big folder listing) reported that parent's size instead of its own.
 */
function peakRssMb(): number {
  try {
    const kb = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kb) return Math.round(Number(kb) / 1024);
  } catch {
    // not Linux
  }
  return Math.round(process.resourceUsage().maxRSS / 1024);
}
