/** The builds' part of `npm run bench`'s report: each build beside raw Ed25519, its phases, and the targets it misses. */
import type { BuildBenchRow } from './build.ts';
import type { Ed25519Capacity } from './ed25519-capacity.ts';

export type BuildRow = BuildBenchRow & {
  rawBefore: number;
  rawAfter: number;
  ratio: number;
  /** CPU time a raw sign+verify pair (measured just before and just after, their mean) over the build's CPU time a record. */
  cpuRatio: number;
  /** The build's CPU time a record, and a raw pair's, in microseconds. */
  cpuUsPerRecord: number;
  cpuUsPerPair: number;
  syncSeconds: number;
};

/**
 * A build beside the raw capacity measured just before and just after it: records a second over
 * pairs a second, and the CPU time of a raw pair over the build's CPU time a record, which the
 * machine's other work moves much less than it moves rates.
 */
export function buildRow(row: BuildBenchRow, before: Ed25519Capacity, after: Ed25519Capacity, syncSeconds: number): BuildRow {
  const rawBefore = before.pairPerSecond,
    rawAfter = after.pairPerSecond;
  const cpuUsPerPair = (before.pairCpuUs + after.pairCpuUs) / 2;
  const cpuUsPerRecord = (1e6 * row.cpuSeconds) / row.audits;
  return {
    ...row,
    rawBefore,
    rawAfter,
    ratio: row.recordsPerSecond / ((rawBefore + rawAfter) / 2),
    cpuRatio: cpuUsPerPair / cpuUsPerRecord,
    cpuUsPerRecord,
    cpuUsPerPair,
    syncSeconds,
  };
}

/** The build's targets: from 100,000 audits up, at least half of raw sign+verify, by wall rate and by CPU time; under 300 MB at a million. */
export const BUILD_TARGETS = { fromAudits: 100_000, ratio: 0.5, peakRssMb: 300, rssAtAudits: 1_000_000 } as const;

/** Each build figure past its target, as a line. */
export function targetFlags(builds: BuildRow[]): string[] {
  const t = BUILD_TARGETS;
  const flags: string[] = [];
  for (const b of builds) {
    const n = b.audits.toLocaleString('en-US');
    if (b.audits >= t.fromAudits && b.ratio < t.ratio)
      flags.push(`build of ${n}: ${b.ratio.toFixed(2)} x raw sign+verify (target >= ${t.ratio})`);
    if (b.audits >= t.fromAudits && b.cpuRatio < t.ratio)
      flags.push(`build of ${n}: ${b.cpuRatio.toFixed(2)} x raw sign+verify by CPU time (target >= ${t.ratio})`);
    if (b.audits >= t.rssAtAudits && b.peakRssMb >= t.peakRssMb)
      flags.push(`build of ${n}: peak RSS ${b.peakRssMb} MB (target < ${t.peakRssMb})`);
  }
  return flags;
}

/** The targets' verdict under the table. */
export function flagLines(flags: string[]): string[] {
  const t = BUILD_TARGETS;
  const targets = `build >= ${t.ratio} x raw sign+verify (wall and CPU) from ${t.fromAudits.toLocaleString('en-US')} audits, peak RSS < ${t.peakRssMb} MB at ${t.rssAtAudits.toLocaleString('en-US')}`;
  return flags.length === 0 ? [`Targets (${targets}): all met`] : [`Targets (${targets}): PAST TARGET`, ...flags.map((f) => `- ${f}`)];
}

/** The raw capacity and the builds' table, with each build's phases. */
export function buildLines(capacity: Ed25519Capacity, filesPerSecond: number, builds: BuildRow[]): string[] {
  const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const share = (sec: number, b: BuildRow) => `${fmt(sec, 1)} (${fmt((100 * sec) / b.seconds, 1)}%)`;
  return [
    `Raw Ed25519 (node:crypto, ${capacity.threads} threads): ${fmt(capacity.signPerSecond)} sign/s, ${fmt(capacity.verifyPerSecond)} verify/s, ${fmt(capacity.pairPerSecond)} sign+verify pairs/s`,
    `File creation (one O_EXCL create + write per record, as the per-record tree of --tree does): ${fmt(filesPerSecond)} files/s`,
    '',
    `Builds: ${builds.every((b) => b.coldCaches) ? "the kernel's page, dentry and inode caches dropped before each (as on a fresh runner)" : builds.some((b) => b.coldCaches) ? 'caches dropped before some builds only' : "the kernel's caches as the runs before left them (not dropped: --keep-caches, or not root)"}`,
    '',
    '| build | seconds | records/s | raw pairs/s just before / after | x raw sign+verify (their mean) | CPU us a record / a raw pair | x raw by CPU | peak RSS MB | then written out (sync) s | of which the log s (share) | log MB | of which the domain map s (share) | packs (MB) | of which the packs s (share) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...builds.map(
      (b) =>
        `| ${fmt(b.audits)} | ${fmt(b.seconds, 1)} | ${fmt(b.recordsPerSecond)} | ${fmt(b.rawBefore)} / ${fmt(b.rawAfter)} | ${fmt(b.ratio, 2)} | ${fmt(b.cpuUsPerRecord)} / ${fmt(b.cpuUsPerPair)} | ${fmt(b.cpuRatio, 2)} | ${fmt(b.peakRssMb)} | ${fmt(b.syncSeconds, 1)} | ${share(b.logSeconds, b)} | ${fmt(b.logBytes / 1e6, 1)} | ${share(b.mapSeconds, b)} | ${fmt(b.packFiles)} (${fmt(b.packBytes / 1e6, 1)}) | ${share(b.packSeconds, b)} |`,
    ),
    '',
    'Each build by phase, seconds (share of the build; start is the lock and the inputs read):',
    ...builds.map(
      (b) =>
        `- ${fmt(b.audits)}: ${Object.entries(b.phaseSeconds)
          .map(([name, sec]) => `${name} ${share(sec, b)}`)
          .join(', ')}`,
    ),
  ];
}
