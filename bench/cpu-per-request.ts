/**
 * CPU a request: the server process's CPU time (user + system, from /proc/PID/stat) over a wrk
 * run, divided by the requests wrk saw answered. Unlike requests per second, it does not move
 * with how much of the two cores wrk and other work on the machine take, so a server's own cost
 * can be read off a shared machine; pairing it with a reference measured seconds before, round by
 * round, cancels most of the drift that is left.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { type LoadResult, wrk } from './gateway.ts';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100;

/** CPU seconds a process has used so far, user and system (fields 14 and 15 of /proc/PID/stat). */
export function cpuSecondsOf(pid: number | string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: fields are counted from after its parenthesis (field 3 first).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** CPU seconds each thread of a process has used so far, by thread id (/proc/PID/task/TID/stat); empty once it has exited. */
export function threadCpuSecondsOf(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      threads.set(Number(tid), cpuSecondsOf(`${pid}/task/${tid}`));
    } catch {
      // The thread ended between the listing and its read.
    }
  }
  return threads;
}

/** A server under wrk: its process (whose CPU is counted), URL and wrk script. */
export interface CpuScenario {
  name: string;
  /** None when one process's CPU is not the server's (nginx's master, a gateway with --workers): req/s and latency only. */
  pid?: number;
  url: string;
  script: string;
  /** Whether every answer must be 2xx or 3xx (a bad-key scenario's are 401s). */
  answered2xx: boolean;
}

export interface CpuResult extends LoadResult {
  /** The server's CPU time a request, microseconds (NaN when its process is not measured). */
  cpuUs: number;
  /** Lowest and highest CPU a request over the rounds, when the scenario ran several. */
  cpuSpread?: [number, number];
}

/**
 * One scenario: a short warm-up, then `seconds` of wrk with the server's CPU read before and after,
 * less what the process spends idle in that time (`idle`, CPU seconds a second: its timers). On a
 * busy machine a server starved of the cores answers fewer requests in the same seconds, and its
 * idle work would otherwise be spread over fewer of them.
 */
export async function measureCpu(s: CpuScenario, seconds: number, connections: number, idle = 0): Promise<CpuResult> {
  await wrk(s.url, s.script, 1, connections);
  const cpuNow = () => (s.pid === undefined ? NaN : cpuSecondsOf(s.pid));
  const before = cpuNow();
  const started = performance.now();
  const load = await wrk(s.url, s.script, seconds, connections);
  const cpu = cpuNow() - before - (idle * (performance.now() - started)) / 1000;
  if (s.answered2xx && load.non2xx > 0) throw new Error(`${s.name}: ${load.non2xx} answers were not 2xx or 3xx`);
  if (!load.requests) throw new Error(`${s.name}: wrk saw no request answered`);
  return { name: s.name, ...load, cpuUs: (cpu * 1e6) / load.requests };
}

/** A ratio taken round by round: `name`'s CPU a request over `reference`'s in the same round. */
export type Pair = readonly [name: string, reference: string];

/**
 * Every scenario once per round, for `rounds` rounds: in the order given in odd rounds, reversed in
 * even ones, so a machine that speeds up or slows down over a minute (this one's CPU time for the
 * same request moves by a third between runs seconds apart) favours neither side of a pair across
 * two rounds. Put a scenario beside its reference. Returns every round of each scenario, each one's median round by
 * CPU a request (with the range of both figures) and, per pair, the CPU-a-request ratios round by
 * round (pairs with a scenario whose CPU is not measured left out).
 */
export async function cpuRounds(
  scenarios: CpuScenario[],
  pairs: readonly Pair[],
  opts: { rounds: number; seconds: number; connections: number; log?: (line: string) => void },
): Promise<{ runs: Map<string, CpuResult[]>; medians: CpuResult[]; paired: Map<string, number[]> }> {
  const runs = new Map<string, CpuResult[]>(scenarios.map((s) => [s.name, []]));
  // Every scenario once first, so that no round measures a server's code being compiled (or a cold cache).
  for (const s of scenarios) await wrk(s.url, s.script, opts.seconds, opts.connections);
  const pids = scenarios.flatMap((s) => (s.pid === undefined ? [] : [s.pid]));
  const idle = await idleRates([...new Set(pids)], 3);
  opts.log?.(`idle CPU, ms a second: ${[...idle].map(([pid, rate]) => `${pid} ${(rate * 1000).toFixed(1)}`).join(', ')}`);
  for (let round = 1; round <= opts.rounds; round++) {
    for (const s of round % 2 === 1 ? scenarios : [...scenarios].reverse()) {
      const r = await measureCpu(s, opts.seconds, opts.connections, s.pid === undefined ? 0 : idle.get(s.pid));
      const cpu = s.pid === undefined ? 'CPU not counted' : `${r.cpuUs.toFixed(1)} us a request`;
      opts.log?.(`round ${round}: ${s.name}: ${cpu}, ${Math.round(r.requestsPerSecond)} req/s`);
      runs.get(s.name)!.push(r);
    }
  }
  const measured = new Set(scenarios.filter((s) => s.pid !== undefined).map((s) => s.name));
  const paired = pairedRatios(
    runs,
    pairs.filter((pair) => pair.every((name) => measured.has(name))),
    (r) => r.cpuUs,
  );
  const medians = [...runs.values()].map((list) => {
    const byCpu = [...list].sort((a, b) => a.cpuUs - b.cpuUs);
    const rates = list.map((r) => r.requestsPerSecond).sort((a, b) => a - b);
    return {
      ...median(byCpu),
      spread: [rates[0]!, rates.at(-1)!] as [number, number],
      cpuSpread: [byCpu[0]!.cpuUs, byCpu.at(-1)!.cpuUs] as [number, number],
    };
  });
  return { runs, medians, paired };
}

/** Per pair and round, `figure` of the scenario over that of its reference in the same round. */
export function pairedRatios<T>(runs: Map<string, T[]>, pairs: readonly Pair[], figure: (r: T) => number): Map<string, number[]> {
  return new Map(
    pairs.map(([name, reference]) => {
      const ref = runs.get(reference)!;
      return [`${name} / ${reference}`, runs.get(name)!.map((r, i) => figure(r) / figure(ref[i]!))] as const;
    }),
  );
}

/** CPU seconds a second each process spends with no request to answer, over the same `seconds`. */
export async function idleRates(pids: number[], seconds: number): Promise<Map<number, number>> {
  const before = pids.map(cpuSecondsOf);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return new Map(pids.map((pid, i) => [pid, Math.max(0, cpuSecondsOf(pid) - before[i]!) / seconds]));
}

export function median<T>(sorted: T[]): T {
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** The results as a Markdown table and the paired ratios under it. */
export function cpuReport(medians: CpuResult[], paired: Map<string, number[]>, heading: string): string[] {
  const f = (x: number, d = 1) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const ratios = [...paired].map(([name, list]) => {
    const sorted = [...list].sort((a, b) => a - b);
    return `${name}, round by round: ${list.map((x) => f(x, 2)).join(', ')} (median ${f(median(sorted), 2)})`;
  });
  return [
    `| ${heading} | CPU a request, us (median) | rounds' range | req/s | p50 ms | p99 ms | non-2xx |`,
    '|---|---:|---:|---:|---:|---:|---:|',
    ...medians
      .filter((r) => !Number.isNaN(r.cpuUs))
      .map(
        (r) =>
          `| ${r.name} | ${f(r.cpuUs)} | ${r.cpuSpread ? `${f(r.cpuSpread[0])}-${f(r.cpuSpread[1])}` : '1 run'} | ${f(r.requestsPerSecond, 0)} | ${f(r.p50ms, 2)} | ${f(r.p99ms, 2)} | ${r.non2xx} |`,
      ),
    '',
    'CPU a request, paired (each ratio within one round):',
    ...ratios,
  ];
}
