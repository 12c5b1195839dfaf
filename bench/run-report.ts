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

/** The ratios taken round by round, of requests per second and of CPU a request: [scenario, its reference]. */
export const PAIRS: readonly Pair[] = [
  [GATEWAY_HOT, FLOOR],
  [QUIET, FLOOR],
  [H3_FLOOR, FLOOR],
  [GATEWAY_HOT, QUIET],
  [BAD_KEY, GATEWAY_HOT],
  [NEVER_AUDITED, GATEWAY_HOT],
];
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
  capacity: Awaited<ReturnType<typeof measureEd25519Capacity>>;
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
  gatewayRecords: number;
  cacheMb: string;
}

export function reportLines(
  { capacity, filesPerSecond, builds, flags, results, paired, cpu, scrape, memory, originDown }: BenchFigures,
  { connections, seconds, rounds, hotCount, gatewayRecords, cacheMb }: BenchSettings,
): string[] {
  const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const nginxHot = results.find((r) => r.name === 'nginx, hot records')!.requestsPerSecond;
  const gatewayHot = results.find((r) => r.name === GATEWAY_HOT)!.requestsPerSecond;
  const floor = results.find((r) => r.name === FLOOR)!.requestsPerSecond;
  const spreadOf = (r: LoadResult) => (r.spread ? `${fmt(r.spread[0])}-${fmt(r.spread[1])}` : '1 run');
  return [
    ...buildLines(capacity, filesPerSecond, builds),
    '',
    ...flagLines(flags),
    '',
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
    `Metrics of the shipped gateway after the rounds: ${scrape ? `${fmt(scrape.requests)} requests counted, a scrape of ${fmt(scrape.bytes)} bytes in ${fmt(scrape.ms, 1)} ms` : 'not scraped'}`,
    '',
    `Gateway memory after the run (${fmt(gatewayRecords)} records, cache ${cacheMb} MB): RSS ${memory.rssMb} MB, peak ${memory.peakMb} MB`,
    `HTTP-origin gateway with its origin (nginx) stopped: ${originDown ? `${originDown.status} ${originDown.code ?? '(no code)'} after ${fmt(originDown.afterMs)} ms` : 'not checked'}`,
  ];
}
