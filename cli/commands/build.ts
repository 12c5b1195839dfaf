import { snakeCaseMembers } from '../../presentation/json-members.ts';
import { defineCommand } from '../command.ts';
import { commandOptions, resolveNow, schemaUrlOf } from '../config.ts';

/** The options `mvr build` reads (and `mvr dev`, which builds too). */
export const BUILD_OPTIONS = [
  'audits',
  'records',
  'public',
  'keys',
  'issuer',
  'schemaUrl',
  'publishKeys',
  'workers',
  'packRecords',
  'keep',
  'signingKey',
  'logKey',
  'progressMs',
  'witnessPolicy',
] as const;
const options = commandOptions(...BUILD_OPTIONS);

import type { BuildPhase, BuildProgress, BuildSummary } from '../../builder/build.ts';
import type { WitnessReport } from '../../witness/build-phase/witnessing.ts';
import { runAction } from '../cli-output.ts';
import type { CliIo } from '../io.ts';
import { createProgress, type Progress, type ProgressState } from '../progress.ts';

export default defineCommand({
  meta: { name: 'build', description: 'Sign every audit into one canonical record per domain and publish the key set (all or nothing)' },
  args: {
    ...options.describe({
      records: 'records folder',
      workers:
        "worker threads (default none up to a MiB of audits, signed on the build's thread; then one per MiB, at most one per core plus one)",
    }),
    now: { type: 'string', description: 'issued_at of every record, ISO 8601 (default SOURCE_DATE_EPOCH, else now)' },
    'allow-empty': { type: 'boolean', description: 'publish even when there are no audits' },
    tree: {
      type: 'boolean',
      description: 'also write one file a record (<ab>/<domain>.json) for people to read; nothing reads it, and it slows the build',
    },
    json: { type: 'boolean', description: 'print the summary as JSON on stdout' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const summary = await buildFromArgs(args, io, Boolean(args.json));
      if (args.json) io.stdout.write(`${JSON.stringify(snakeCaseMembers({ ok: true, ...summary }))}\n`);
      else io.stdout.write(formatSummary(summary));
    }),
});

/** Resolves the build's options from flags and env and runs it with progress on stderr (shared with `mvr dev`). */
export async function buildFromArgs(args: Record<string, unknown>, io: CliIo, json = false): Promise<BuildSummary> {
  const config = options.resolve(args, io.env);
  const { runBuild } = await import('../../builder/build.ts');
  const progress = createProgress({ command: 'build', json, intervalMs: config.progressMs, stream: io.stderr });
  const phases = buildPhases(progress);
  // Ctrl-C or SIGTERM: the build stops before it goes live and cleans up (INTERRUPTED, exit 130); a second one does not wait.
  const interrupt = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupt.signal.aborted) process.exit(130);
    interrupt.abort(signal);
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  try {
    const summary = await runBuild({
      auditsDir: config.audits,
      recordsDir: config.records,
      publicDir: config.public,
      keysDir: config.keys,
      issuer: config.issuer,
      schemaUrl: schemaUrlOf(config),
      now: await resolveNow(typeof args.now === 'string' ? args.now : undefined, io.env),
      signingKey: config.signingKey,
      logKey: config.logKey,
      publishKeysFile: config.publishKeys,
      workers: config.workers,
      packRecords: config.packRecords,
      keep: config.keep,
      allowEmpty: Boolean(args['allow-empty']),
      tree: Boolean(args.tree),
      onWarning: (message) => io.stderr.write(`mvr build: warning: ${message}\n`),
      witnessPolicy: config.witnessPolicy,
      onWitness: (report) => progress.update(witnessProgress(report), true),
      onProgress: phases.records,
      onPhase: phases.begin,
      signal: interrupt.signal,
    });
    phases.finish();
    return summary;
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    progress.stop();
  }
}

/** What each phase is called on a progress line. */
const PHASE_TEXT: Record<BuildPhase, string> = {
  records: 'signing records',
  index: 'writing the index',
  map: 'writing the domain map',
  changes: 'writing the change feeds',
  log: 'appending to the log',
  witness: 'asking the witnesses to cosign the checkpoint',
  key_set: 'writing the key set',
  swap: 'swapping the build in',
  prune: 'removing builds no longer kept',
};

/**
 * The build's progress as lines: each phase announced as it begins; while records are signed, the
 * share of the input done and the time left at the rate measured so far. No estimate is made for
 * the later phases, which have no measured rate of their own; their line says what is being done.
 */
export function buildPhases(progress: Progress, clock: () => number = Date.now) {
  let recordsStarted = clock();
  let recordsState: ProgressState | null = null;
  let written = 0;
  const records = (p: BuildProgress) => {
    const pct = p.totalBytes ? `${((100 * p.bytesDone) / p.totalBytes).toFixed(0)}% of input, ` : '';
    const rate = p.elapsedMs > 0 ? Math.round(p.records / (p.elapsedMs / 1000)) : 0;
    const spent = clock() - recordsStarted;
    const left =
      p.bytesDone > 0 && p.bytesDone < p.totalBytes ? Math.ceil(((p.totalBytes - p.bytesDone) * spent) / p.bytesDone / 1000) : null;
    written = p.records;
    recordsState = {
      text: `${pct}${p.records.toLocaleString('en-US')} records, ${rate.toLocaleString('en-US')}/s${left === null ? '' : `, about ${formatSeconds(left)} left`}`,
      fields: {
        phase: 'records',
        records: p.records,
        bytes_read: p.bytesRead,
        bytes_done: p.bytesDone,
        total_bytes: p.totalBytes,
        records_per_second: rate,
        ...(left === null ? {} : { seconds_left: left }),
      },
    };
    progress.update({ ...recordsState, text: `${PHASE_TEXT.records}: ${recordsState.text}` });
  };
  return {
    records,
    begin: (phase: BuildPhase) => {
      if (phase === 'records') recordsStarted = clock();
      // Records are counted once signing has begun: "signing records, 0 records" read as if none would be.
      const text = phase === 'records' ? PHASE_TEXT.records : `${PHASE_TEXT[phase]} (${written.toLocaleString('en-US')} records signed)`;
      progress.update({ text, fields: { phase, records: written } }, true);
    },
    /** The done line sums up the records, as it did before there were phases. */
    finish: () => {
      if (recordsState) {
        const { phase: _phase, seconds_left: _left, ...fields } = recordsState.fields;
        progress.update({ text: recordsState.text, fields });
      }
      progress.finish();
    },
  };
}

/** A witness's answer as a progress line (one each, written as it comes). */
export function witnessProgress(r: WitnessReport): ProgressState {
  return {
    text: r.ok ? `witness ${r.witness} cosigned the checkpoint at ${r.time}` : `${r.message} (${r.code})`,
    fields: {
      phase: 'witness',
      witness: r.witness,
      ...(r.ok ? { cosigned_at: r.time ?? '' } : { code: r.code ?? '', message: r.message ?? '' }),
    },
  };
}

/** Who cosigned and who did not, for a summary line. */
export function witnessList(witnesses: WitnessReport[]): string {
  return witnesses.map((w) => `${w.witness} ${w.ok ? 'cosigned' : `did not (${w.code})`}`).join(', ');
}

const formatSeconds = (s: number) => (s < 90 ? `${s} s` : `${Math.round(s / 60)} min`);

/** The human summary: counts by status and tier, rate, where things went. */
export function formatSummary(s: BuildSummary): string {
  const counts = (o: Record<string, number>) =>
    Object.entries(o)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none';
  return [
    ...(s.unchanged
      ? [`build ${s.buildId} is already live (the same audits, keys, options and --now): no build written, nothing appended to the log`]
      : []),
    `${s.unchanged ? 'checked' : 'built'} ${s.records.toLocaleString('en-US')} records from ${s.files} file${s.files === 1 ? '' : 's'} in ${(s.durationMs / 1000).toFixed(2)} s (${Math.round(s.recordsPerSecond).toLocaleString('en-US')} records/s, ${workersText(s.workers)}, peak RSS ${s.peakRssMb} MB)`,
    `  by status: ${counts(s.byStatus)}`,
    `  by tier:   ${counts(s.byTier)}`,
    `  ${s.signed ? `signed with key ${s.keyId}` : 'UNSIGNED (no signing key configured)'}; key set lists ${s.publishedKeyIds.length} key${s.publishedKeyIds.length === 1 ? '' : 's'}`,
    `  records:   ${s.buildDir} (${s.keptBuilds} build${s.keptBuilds === 1 ? '' : 's'} kept; ${s.changes.toLocaleString('en-US')} changes against the earlier ones)`,
    `  key set:   ${s.keySetFile}`,
    s.log
      ? `  log:       ${s.log.origin}: ${(s.log.to - s.log.from).toLocaleString('en-US')} entries appended (${s.log.from.toLocaleString('en-US')} -> ${s.log.to.toLocaleString('en-US')}), ${s.log.tiles} tiles, ${(s.log.bytes / 1024).toFixed(1)} KiB, ${(s.log.durationMs / 1000).toFixed(2)} s`
      : `  log:       ${s.unchanged ? 'nothing appended (its records are in the log already, if it has one)' : 'not appended (no log key)'}`,
    ...(s.witnesses ? [`  witnesses: ${witnessList(s.witnesses)}`] : []),
    '',
  ].join('\n');
}

/** How the summary names who signed: "1 worker", "3 workers", or the build's own thread. */
function workersText(workers: number): string {
  return workers === 0 ? "signed on the build's thread" : `${workers} worker${workers === 1 ? '' : 's'}`;
}
