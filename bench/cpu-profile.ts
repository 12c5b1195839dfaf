/**
 * Summarizes a V8 CPU profile (`node --cpu-prof` writes one on exit) by self time: the top
 * functions and the top files (node_modules collapsed to their package, Node's own to `node:`),
 * each as a share of the profile's whole time, idle included, and of its busy time.
 *
 * Usage: npx tsx bench/cpu-profile.ts PROFILE.cpuprofile [--top 25] [--from SECONDS] [--inclusive]
 * How the gateway was profiled under wrk with it: docs/benchmarks.md ("the shipped gateway's hot path").
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a function lives: a package, a Node built-in, or a file of this project (relative). */
export function placeOf(url: string): string {
  if (url === '') return '(native or V8)';
  if (url.startsWith('node:')) return 'node: (Node.js itself)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/(dist\/|packages\/verifier\/dist\/)?([^/]+\/[^/]+\.[cm]?[jt]s)$/.exec(url);
  return own ? `${own[1] ?? ''}${own[2]}` : url;
}

const nameOf = ({ functionName, url, lineNumber }: ProfileNode['callFrame']) =>
  `${functionName || '(anonymous)'} ${placeOf(url)}${url ? `:${lineNumber + 1}` : ''}`;

/**
 * Self time (ms) per function and per place, total time per function (each function counted once
 * per sample it is on the stack of), and the profile's total and idle time. Samples taken in the
 * first `fromMs` are left out (start-up and warm-up).
 */
export function selfTimes(
  profile: Profile,
  fromMs = 0,
): { total: number; idle: number; byFunction: Map<string, number>; byPlace: Map<string, number>; inclusive: Map<string, number> } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0,
    idle = 0,
    at = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    at += ms;
    if (at < fromMs) return;
    const frame = nodes.get(id)!.callFrame;
    total += ms;
    if (frame.functionName === '(idle)') {
      idle += ms;
      return;
    }
    const name = nameOf(frame);
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    byPlace.set(placeOf(frame.url), (byPlace.get(placeOf(frame.url)) ?? 0) + ms);
    const onStack = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) onStack.add(nameOf(nodes.get(n)!.callFrame));
    for (const f of onStack) inclusive.set(f, (inclusive.get(f) ?? 0) + ms);
  });
  return { total, idle, byFunction, byPlace, inclusive };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      top: { type: 'string', default: '25' },
      from: { type: 'string', default: '0' },
      inclusive: { type: 'boolean', default: false },
    },
  });
  if (positionals.length !== 1) {
    process.stderr.write('usage: tsx bench/cpu-profile.ts PROFILE.cpuprofile [--top N] [--from SECONDS] [--inclusive]\n');
    process.exit(2);
  }
  const { total, idle, byFunction, byPlace, inclusive } = selfTimes(
    JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile,
    Number(values.from) * 1000,
  );
  const busy = total - idle;
  const top = Number(values.top);
  const table = (title: string, rows: Map<string, number>) => {
    process.stdout.write(`\n| ${title} | self ms | of busy |\n|---|---:|---:|\n`);
    for (const [name, ms] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(`| ${name.replaceAll('|', '\\|')} | ${ms.toFixed(0)} | ${((100 * ms) / busy).toFixed(1)}% |\n`);
    }
  };
  process.stdout.write(
    `profile: ${(total / 1000).toFixed(1)} s, busy ${(busy / 1000).toFixed(1)} s (${((100 * busy) / total).toFixed(0)}%)\n`,
  );
  table('file or package', byPlace);
  table('function', byFunction);
  if (values.inclusive) table('function (total: itself and what it calls)', inclusive);
}
