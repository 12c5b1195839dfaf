import { defineCommand } from '../command.ts';
import { commandOptions, resolveNow, schemaUrlOf, type Env } from '../config.ts';

/** The options `mvr build` reads (and `mvr dev`, which builds too). */
export const BUILD_OPTIONS = ['audits', 'records', 'public', 'keys', 'issuer', 'schemaUrl', 'publishKeys', 'workers', 'keep', 'signingKey', 'logKey', 'progressMs'] as const;
const options = commandOptions(...BUILD_OPTIONS);
import { runAction } from '../cli-output.ts';
import { createProgress } from '../progress.ts';
import type { BuildSummary } from '../../builder/build.ts';

export default defineCommand({
  meta: { name: 'build', description: 'Sign every audit into one canonical record per domain and publish the key set (all or nothing)' },
  args: {
    ...options.describe({ records: 'records folder', workers: 'worker threads (default one per core, plus one)' }),
    now: { type: 'string', description: 'issued_at of every record, ISO 8601 (default SOURCE_DATE_EPOCH, else now)' },
    'allow-empty': { type: 'boolean', description: 'publish even when there are no audits' },
    json: { type: 'boolean', description: 'print the summary as JSON on stdout' },
  },
  run: ({ args }) =>
    runAction(Boolean(args.json), async () => {
      const summary = await buildFromArgs(args, process.env, Boolean(args.json));
      if (args.json) process.stdout.write(`${JSON.stringify({ ok: true, ...summary })}\n`);
      else process.stdout.write(formatSummary(summary));
    }),
});

/** Resolves the build's options from flags and env and runs it with progress on stderr (shared with `mvr dev`). */
export async function buildFromArgs(args: Record<string, unknown>, env: Env, json = false): Promise<BuildSummary> {
  const config = options.resolve(args, env);
  const { runBuild } = await import('../../builder/build.ts');
  const progress = createProgress({ command: 'build', json, intervalMs: config.progressMs });
  try {
    const summary = await runBuild({
      auditsDir: config.audits,
      recordsDir: config.records,
      publicDir: config.public,
      keysDir: config.keys,
      issuer: config.issuer,
      schemaUrl: schemaUrlOf(config),
      now: resolveNow(typeof args.now === 'string' ? args.now : undefined, env),
      signingKey: config.signingKey,
      logKey: config.logKey,
      publishKeysFile: config.publishKeys,
      workers: config.workers,
      keep: config.keep,
      allowEmpty: Boolean(args['allow-empty']),
      onWarning: (message) => process.stderr.write(`mvr build: warning: ${message}\n`),
      onProgress: (p) => {
        const pct = p.totalBytes ? `${((100 * p.bytesRead) / p.totalBytes).toFixed(0)}% of input, ` : '';
        const rate = p.elapsedMs > 0 ? Math.round(p.records / (p.elapsedMs / 1000)) : 0;
        progress.update({
          text: `${pct}${p.records.toLocaleString('en-US')} records, ${rate.toLocaleString('en-US')}/s`,
          fields: { records: p.records, bytes_read: p.bytesRead, total_bytes: p.totalBytes, records_per_second: rate },
        });
      },
    });
    progress.finish();
    return summary;
  } finally {
    progress.stop();
  }
}

/** The human summary: counts by status and tier, rate, where things went. */
export function formatSummary(s: BuildSummary): string {
  const counts = (o: Record<string, number>) => Object.entries(o).map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
  return [
    ...(s.unchanged ? [`build ${s.buildId} is already live (the same audits, keys, options and --now): no build written, nothing appended to the log`] : []),
    `built ${s.records.toLocaleString('en-US')} records from ${s.files} file${s.files === 1 ? '' : 's'} in ${(s.durationMs / 1000).toFixed(2)} s (${Math.round(s.recordsPerSecond).toLocaleString('en-US')} records/s, ${s.workers} workers, peak RSS ${s.peakRssMb} MB)`,
    `  by status: ${counts(s.byStatus)}`,
    `  by tier:   ${counts(s.byTier)}`,
    `  ${s.signed ? `signed with key ${s.keyId}` : 'UNSIGNED (no signing key configured)'}; key set lists ${s.publishedKeyIds.length} key${s.publishedKeyIds.length === 1 ? '' : 's'}`,
    `  records:   ${s.buildDir} (${s.keptBuilds} build${s.keptBuilds === 1 ? '' : 's'} kept; ${s.changes.toLocaleString('en-US')} changes against the earlier ones)`,
    `  key set:   ${s.keySetFile}`,
    s.log
      ? `  log:       ${s.log.origin}: ${(s.log.to - s.log.from).toLocaleString('en-US')} entries appended (${s.log.from.toLocaleString('en-US')} -> ${s.log.to.toLocaleString('en-US')}), ${s.log.tiles} tiles, ${(s.log.bytes / 1024).toFixed(1)} KiB, ${(s.log.durationMs / 1000).toFixed(2)} s`
      : '  log:       not appended (no log key)',
    '',
  ].join('\n');
}
