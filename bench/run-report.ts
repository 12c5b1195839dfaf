/** The table `npm run bench` prints: the builds, the gateway's scenarios and their ratios. */
import { type BuildRow, buildLines, flagLines } from './build-report.ts';
import { type CpuResult, cpuReport, median, type Pair } from './cpu-per-request.ts';
import type { measureEd25519Capacity } from './ed25519-capacity.ts';
import type { LoadResult, scrapeMetrics } from './gateway.ts';

export const GATEWAY_HOT = 'gateway as shipped (access log on) with metrics on, hot records',
  NEVER_AUDITED = 'gateway, never-audited domains',
  BAD_KEY = 'gateway, bad API key (401)';
export const FLOOR = 'bare node:http server, same bytes, no checks (floor)',
  H3_FLOOR = 'h3 1.x on node:http, same bytes, no checks',
  QUIET = 'gateway with --quiet (no access log), metrics off, hot records',
  BEFORE = 'gateway as shipped, hot records, the --before checkout';
export const LOOKUP_FLOOR = 'bare node:http server looking the key and the domain up, rotating hot set (lookup floor)',
  GATEWAY_ROTATING = 'gateway as shipped (access log on) with metrics on, rotating hot set';

/** The ratios taken round by round, of requests per second and of CPU a request: [scenario, its reference]. */
export const PAIRS: readonly Pair[] = [
  [GATEWAY_HOT, FLOOR],
  [QUIET, FLOOR],
  [H3_FLOOR, FLOOR],
  [GATEWAY_HOT, QUIET],
  [BAD_KEY, GATEWAY_HOT],
  [NEVER_AUDITED, GATEWAY_HOT],
  [GATEWAY_ROTATING, LOOKUP_FLOOR],
  [LOOKUP_FLOOR, FLOOR],
  [GATEWAY_ROTATING, GATEWAY_HOT],
];

/**
 * What the run is judged by: a paired CPU ratio's median at most `at`, or a scenario's p99 (its
 * median round by CPU) under `at` ms. A figure past its target is flagged in the output.
 */
export type Target = { what: string; at: number } & ({ pair: `${string} / ${string}` } | { p99Of: string });
export const TARGETS: readonly Target[] = [
  { what: 'a hot record, CPU x the floor', pair: `${GATEWAY_HOT} / ${FLOOR}`, at: 2.0 },
  { what: 'the rotating hot set, CPU x the lookup floor', pair: `${GATEWAY_ROTATING} / ${LOOKUP_FLOOR}`, at: 1.4 },
  { what: 'a bad key, CPU x a hot record', pair: `${BAD_KEY} / ${GATEWAY_HOT}`, at: 1.2 },
  { what: 'a never-audited domain, CPU x a hot record', pair: `${NEVER_AUDITED} / ${GATEWAY_HOT}`, at: 1.2 },
  // The access line and the metrics at most 15% of a request's CPU: as shipped at most 1/0.85 of `--quiet`.
  { what: 'access line and metrics: as shipped x --quiet (15% of the CPU = 1.18)', pair: `${GATEWAY_HOT} / ${QUIET}`, at: 1.18 },
  { what: 'a hot record, p99 ms at 64 connections', p99Of: GATEWAY_HOT, at: 10 },
  { what: 'the rotating hot set, p99 ms at 64 connections', p99Of: GATEWAY_ROTATING, at: 10 },
];

/** Each target with the run's figure (NaN when not measured) and whether it is met. */
export function judged(cpu: BenchFigures['cpu']): { target: Target; figure: number; met: boolean }[] {
  return TARGETS.map((target) => {
    let figure = NaN;
    if ('pair' in target) {
      const ratios = cpu.paired.get(target.pair);
      if (ratios?.length) figure = median([...ratios].sort((a, b) => a - b));
    } else figure = cpu.medians.find((r) => r.name === target.p99Of)?.p99ms ?? NaN;
    const met = 'pair' in target ? figure <= target.at : figure < target.at;
    return { target, figure, met };
  });
}

/** Each summary row: the scenario, its reference (the ratio's denominator) and its target, if any. */
const SUMMARY: readonly { name: string; label: string; reference?: string; target?: string }[] = [
  { name: FLOOR, label: 'bare node:http, same bytes, no checks (the floor)' },
  { name: H3_FLOOR, label: 'h3 1.x on node:http, same bytes, no checks', reference: FLOOR },
  { name: GATEWAY_HOT, label: 'gateway as shipped (access log, metrics), hot records', reference: FLOOR, target: '<= 2.0, p99 < 10 ms' },
  { name: QUIET, label: 'the same with `--quiet`, metrics off', reference: FLOOR },
  { name: BAD_KEY, label: 'gateway, bad API key (401)', reference: GATEWAY_HOT, target: '<= 1.2' },
  { name: NEVER_AUDITED, label: 'gateway, never-audited domains', reference: GATEWAY_HOT, target: '<= 1.2' },
  { name: LOOKUP_FLOOR, label: 'node:http looking the key and the domain up, rotating set (the lookup floor)', reference: FLOOR },
  { name: GATEWAY_ROTATING, label: 'gateway as shipped, rotating set', reference: LOOKUP_FLOOR, target: '<= 1.4, p99 < 10 ms' },
];

/** The README's table: each server's CPU a request beside its reference, the paired ratio and the target. */
export function summaryTable(cpu: BenchFigures['cpu'], hotCount: number, rotatingCount: number): string[] {
  const f = (x: number, d = 1) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const short = new Map([
    [FLOOR, 'floor'],
    [GATEWAY_HOT, 'hot'],
    [LOOKUP_FLOOR, 'lookup floor'],
  ]);
  const rows = SUMMARY.flatMap(({ name, label, reference, target }) => {
    const r = cpu.medians.find((m) => m.name === name);
    if (!r) return [];
    const ratios = reference ? cpu.paired.get(`${name} / ${reference}`) : undefined;
    const ratio = ratios?.length
      ? `${f(median([...ratios].sort((a, b) => a - b)), 2)} of ${short.get(reference!)}`
      : reference
        ? ''
        : '1.00';
    return [`| ${label} | ${f(r.cpuUs)} | ${ratio} | ${target ?? ''} | ${f(r.requestsPerSecond, 0)} | ${f(r.p99ms, 1)} |`];
  });
  return [
    `| scenario (64 connections; hot set ${hotCount.toLocaleString('en-US')} records, rotating set ${rotatingCount.toLocaleString('en-US')}) | CPU a request, us | ratio of CPU (paired, median) | target | req/s | p99 ms |`,
    '|---|---:|---:|---|---:|---:|',
    ...rows,
  ];
}

/** The targets as lines: each figure, its target, and PAST TARGET where it is not met. */
export function targetLines(cpu: BenchFigures['cpu']): string[] {
  return [
    'Targets (paired medians of CPU a request; p99 of the median round):',
    ...judged(cpu).map(
      ({ target, figure, met }) =>
        `${met ? 'met        ' : 'PAST TARGET'} ${target.what}: ${Number.isNaN(figure) ? 'not measured' : figure.toFixed(2)} (target ${'pair' in target ? '<=' : '<'} ${target.at})`,
    ),
  ];
}
/** With --before: the other checkout's gateway against the floor, and this one's against it. */
export const BEFORE_PAIRS: readonly Pair[] = [
  [BEFORE, FLOOR],
  [GATEWAY_HOT, BEFORE],
];

export type OriginDown = { status: number; code: string | null; afterMs: number } | null;

/** Each scenario's median round by requests per second, with the range of its rounds. */
export function medianRounds(runs: Map<string, LoadResult[]>): LoadResult[] {
  return [...runs.values()].map((list) => {
    const sorted = [...list].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
    return { ...median(sorted), spread: [sorted[0]!.requestsPerSecond, sorted.at(-1)!.requestsPerSecond] as [number, number] };
  });
}

export interface BenchFigures {
  /** Null with --gateway-only (no raw capacity, no measured build). */
  capacity: Awaited<ReturnType<typeof measureEd25519Capacity>> | null;
  filesPerSecond: number;
  builds: BuildRow[];
  /** Build figures past their targets ({@link targetFlags}). */
  flags: string[];
  results: LoadResult[];
  paired: Map<string, number[]>;
  /** CPU a request: each scenario's median round by it, and its paired ratios. */
  cpu: { medians: CpuResult[]; paired: Map<string, number[]> };
  scrape: Awaited<ReturnType<typeof scrapeMetrics>> | null;
  memory: { rssMb: number; peakMb: number };
  originDown: OriginDown;
}

/** The run's settings the table names. */
export interface BenchSettings {
  connections: number;
  seconds: number;
  rounds: number;
  hotCount: number;
  rotatingCount: number;
  gatewayRecords: number;
  cacheMb: string;
}

export function reportLines(
  { capacity, filesPerSecond, builds, flags, results, paired, cpu, scrape, memory, originDown }: BenchFigures,
  { connections, seconds, rounds, hotCount, rotatingCount, gatewayRecords, cacheMb }: BenchSettings,
): string[] {
  const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const nginxHot = results.find((r) => r.name === 'nginx, hot records')!.requestsPerSecond;
  const gatewayHot = results.find((r) => r.name === GATEWAY_HOT)!.requestsPerSecond;
  const floor = results.find((r) => r.name === FLOOR)!.requestsPerSecond;
  const spreadOf = (r: LoadResult) => (r.spread ? `${fmt(r.spread[0])}-${fmt(r.spread[1])}` : '1 run');
  return [
    ...(capacity ? [...buildLines(capacity, filesPerSecond, builds), '', ...flagLines(flags), ''] : []),
    `| gateway scenario (${connections} connections, ${seconds} s, median of ${rounds} rounds; hot set ${fmt(hotCount)} records) | req/s | rounds' range | p50 ms | p99 ms | non-2xx | x nginx hot | x floor | x gateway hot |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.name} | ${fmt(r.requestsPerSecond)} | ${spreadOf(r)} | ${fmt(r.p50ms, 2)} | ${fmt(r.p99ms, 2)} | ${fmt(r.non2xx)} | ${fmt(r.requestsPerSecond / nginxHot, 2)} | ${fmt(r.requestsPerSecond / floor, 2)} | ${fmt(r.requestsPerSecond / gatewayHot, 2)} |`,
    ),
    '',
    'Requests per second, paired: each ratio taken within one round, then their median.',
    ...[...paired].map(
      ([name, ratios]) =>
        `${name}, round by round: ${ratios.map((x) => fmt(x, 2)).join(', ')} (median ${fmt(median([...ratios].sort((a, b) => a - b)), 2)})`,
    ),
    '',
    ...cpuReport(cpu.medians, cpu.paired, `server, CPU a request (median of ${rounds} rounds by CPU a request)`),
    '',
    ...targetLines(cpu),
    '',
    ...summaryTable(cpu, hotCount, rotatingCount),
    '',
    `Metrics of the shipped gateway after the rounds: ${scrape ? `${fmt(scrape.requests)} requests counted, a scrape of ${fmt(scrape.bytes)} bytes in ${fmt(scrape.ms, 1)} ms` : 'not scraped'}`,
    '',
    `Gateway memory after the run (${fmt(gatewayRecords)} records, cache ${cacheMb} MB): RSS ${memory.rssMb} MB, peak ${memory.peakMb} MB`,
    `HTTP-origin gateway with its origin (nginx) stopped: ${originDown ? `${originDown.status} ${originDown.code ?? '(no code)'} after ${fmt(originDown.afterMs)} ms` : 'not checked'}`,
  ];
}
