import { FAULT_COUNT, type FaultReport } from './faults.ts';
import type { MirrorReport } from './mirrors.ts';
import type { SoakOptions } from './options.ts';
import type { RssSummary } from './rss.ts';
import type { Stats } from './stats.ts';

export const RSS_GROWTH_LIMIT_PCT = 10;

export interface SoakReport {
  pass: boolean;
  failures: string[];
  options: SoakOptions;
  gateway: { pid: number; cacheMb: number; crashed: string | null };
  load: { plannedSeconds: number; loadSeconds: number; requests: number; requestsPerSecond: number; hitMaxRequests: boolean };
  /** CPU seconds used during the load: the gateway process, and this process (client, checks, builds). */
  cpu: { gatewaySeconds: number | null; soakSeconds: number; cores: number };
  byStatus: Record<string, number>;
  byKind: Record<string, Record<string, number>>;
  /** Outcomes by route: verify, bundle, lookup (private), mirror (runs of `mvr mirror`). */
  byRoute: Record<string, Record<string, number>>;
  /** Every refusal by code: the gateway's 4xx and 5xx, the mirrors', the refused build's. */
  refusals: Record<string, number>;
  /** Coded refusals that fit the fault in force (besides the expected 503s). */
  expectedRefusals: { total: number; byCause: Record<string, number> };
  mirrors: MirrorReport | null;
  wrongAnswers: { total: number; byReason: Record<string, number> };
  unexpected5xx: { total: number; byCause: Record<string, number> };
  expected503: { total: number; byCause: Record<string, number> };
  transportErrors: { total: number; byCause: Record<string, number> };
  /** Requests sent again once after a kept-alive connection the gateway closed as they went out (then answered or counted above). */
  retried: { total: number; byCause: Record<string, number> };
  client: {
    keySetFetches: number;
    unknownKeyRefetches: number;
    verifiedAfterRefetch: number;
    ed25519Verifications: number;
    validWhileAway: number;
    neverAuditedWhileAway: number;
    maxOldBuildLagMs: number;
  };
  faults: FaultReport[];
  rss: RssSummary | null;
  examples: Stats['examples'];
}

const obj = (m: Map<string, number>) => Object.fromEntries([...m].sort((a, b) => b[1] - a[1]));

export function makeReport(args: {
  options: SoakOptions;
  stats: Stats;
  faults: FaultReport[];
  rss: RssSummary | null;
  loadMs: number;
  hitMaxRequests: boolean;
  mirrors: MirrorReport | null;
  cpu: SoakReport['cpu'];
  pid: number;
  crashed: string | null;
}): SoakReport {
  const { stats, faults, rss } = args;
  const wrong = stats.sum(stats.wrong),
    bad5xx = stats.sum(stats.unexpected5xx),
    transport = stats.sum(stats.transport);
  const failures: string[] = [];
  if (args.crashed) failures.push(args.crashed);
  if (stats.total === 0) failures.push('no requests were made');
  if (wrong > 0) failures.push(`${wrong} wrong answer(s)`);
  if (bad5xx > 0) failures.push(`${bad5xx} 5xx outside the expected fault windows`);
  if (transport > 0) failures.push(`${transport} request(s) without an HTTP answer`);
  for (const f of faults) {
    if (f.error) failures.push(`fault "${f.name}": ${f.error}`);
    else if (!f.recovered) failures.push(`fault "${f.name}": the gateway did not recover by itself`);
    else if (!f.exercised) failures.push(`fault "${f.name}": injected but never seen by the load`);
  }
  if (faults.length < FAULT_COUNT) failures.push(`only ${faults.length} of ${FAULT_COUNT} faults were injected`);
  const m = args.mirrors;
  if (!m || m.full === 0) failures.push('no mirror made a build live');
  else if (m.resumed === 0 && m.maxPacks > 1) failures.push('no resumed mirror made a build live');
  if (!rss) failures.push('too few RSS samples after the warm-up');
  else if (!(rss.growthPct < RSS_GROWTH_LIMIT_PCT)) failures.push(`RSS grew ${rss.growthPct}% (limit ${RSS_GROWTH_LIMIT_PCT}%)`);
  return {
    pass: failures.length === 0,
    failures,
    options: args.options,
    gateway: { pid: args.pid, cacheMb: args.options.cacheMb, crashed: args.crashed },
    load: {
      plannedSeconds: args.options.seconds,
      loadSeconds: Math.round(args.loadMs / 100) / 10,
      requests: stats.total,
      requestsPerSecond: Math.round(stats.total / (args.loadMs / 1000)),
      hitMaxRequests: args.hitMaxRequests,
    },
    cpu: args.cpu,
    byStatus: obj(stats.byStatus),
    byKind: Object.fromEntries([...stats.byKind].map(([k, m]) => [k, obj(m)])),
    byRoute: Object.fromEntries([...stats.byRoute].map(([k, m]) => [k, obj(m)])),
    refusals: obj(stats.refusals),
    expectedRefusals: { total: stats.sum(stats.expectedRefusals), byCause: obj(stats.expectedRefusals) },
    mirrors: args.mirrors,
    wrongAnswers: { total: wrong, byReason: obj(stats.wrong) },
    unexpected5xx: { total: bad5xx, byCause: obj(stats.unexpected5xx) },
    expected503: { total: stats.sum(stats.expected503), byCause: obj(stats.expected503) },
    transportErrors: { total: transport, byCause: obj(stats.transport) },
    retried: { total: stats.sum(stats.retried), byCause: obj(stats.retried) },
    client: {
      keySetFetches: stats.keySetFetches,
      unknownKeyRefetches: stats.unknownKeyRefetches,
      verifiedAfterRefetch: stats.verifiedAfterRefetch,
      ed25519Verifications: stats.verifications,
      validWhileAway: stats.validWhileAway,
      neverAuditedWhileAway: stats.neverAuditedWhileAway,
      maxOldBuildLagMs: stats.maxOldBuildLagMs,
    },
    faults,
    rss,
    examples: stats.examples,
  };
}

const n = (x: number) => x.toLocaleString('en-US');
const mark = (ok: boolean) => (ok ? 'yes' : 'NO');
const sign = (x: number) => `${x >= 0 ? '+' : ''}${x}`;

export function formatReport(r: SoakReport): string {
  const o = r.options;
  const lines: string[] = [];
  const list = (rec: Record<string, number>) =>
    Object.entries(rec)
      .map(([k, v]) => `${k}: ${n(v)}`)
      .join(', ') || 'none';
  lines.push(
    `merchant-verify soak: ${n(o.audits)} records, concurrency ${o.concurrency}, gateway --cache-mb ${o.cacheMb}, pid ${r.gateway.pid}`,
  );
  lines.push(
    `load: ${r.load.loadSeconds} s (planned ${r.load.plannedSeconds} s${r.load.loadSeconds > r.load.plannedSeconds + 0.5 ? ', extended until the last fault finished' : ''}), ${n(r.load.requests)} requests, ${n(r.load.requestsPerSecond)} req/s${r.load.hitMaxRequests ? ' (stopped at --max-requests)' : ''}`,
  );
  lines.push(
    `CPU during the load: gateway ${r.cpu.gatewaySeconds ?? '?'} s, soak process (client, checks, builds) ${r.cpu.soakSeconds} s, on ${r.cpu.cores} cores`,
  );
  lines.push(`by status: ${list(r.byStatus)}`);
  for (const [kind, m] of Object.entries(r.byKind)) lines.push(`  ${kind.padEnd(8)} ${list(m)}`);
  lines.push(
    `wrong answers = 0? ${mark(r.wrongAnswers.total === 0)} (${n(r.wrongAnswers.total)}${r.wrongAnswers.total ? `: ${list(r.wrongAnswers.byReason)}` : ''})`,
  );
  lines.push(
    `5xx outside the fault windows = 0? ${mark(r.unexpected5xx.total === 0)} (${n(r.unexpected5xx.total)}${r.unexpected5xx.total ? `: ${list(r.unexpected5xx.byCause)}` : ''})`,
  );
  lines.push(`expected 503s: ${list(r.expected503.byCause)}`);
  lines.push(`other coded refusals that fit the fault in force: ${list(r.expectedRefusals.byCause)}`);
  lines.push(
    `answers by route: ${Object.entries(r.byRoute)
      .map(([route, m]) => `${route} (${list(m)})`)
      .join('; ')}`,
  );
  lines.push(`refusals by code: ${list(r.refusals)}`);
  if (r.mirrors) {
    const m = r.mirrors;
    lines.push(
      `mirrors: ${m.runs} runs of mvr mirror, ${m.full} full and ${m.resumed} resumed made a build live (${m.interrupted} stopped after their first pack, then continued); ${n(m.packsFetched)} packs fetched, ${n(m.packsReused)} reused, ${n(m.recordsVerified)} records verified`,
    );
  }
  lines.push(
    `requests without an answer: ${n(r.transportErrors.total)}${r.transportErrors.total ? ` (${list(r.transportErrors.byCause)})` : ''}`,
    `requests sent again once after the gateway closed their kept-alive connection as they went out: ${n(r.retried.total)}${r.retried.total ? ` (${list(r.retried.byCause)})` : ''}`,
  );
  lines.push(
    `client: ${n(r.client.ed25519Verifications)} Ed25519 verifications (verifyRecord; identical bytes against the same key set verified once), key set fetched ${r.client.keySetFetches} time(s), ${n(r.client.unknownKeyRefetches)} UNKNOWN_KEY -> refetch, ${n(r.client.verifiedAfterRefetch)} verified after a refetch`,
  );
  lines.push(
    `new builds picked up: the previous build still answered requests sent up to ${r.client.maxOldBuildLagMs} ms after the swap (allowed here: 1000 ms; docs/http-api.md: within a quarter of a second)`,
  );
  lines.push('faults:');
  r.faults.forEach((f, i) => {
    const status = f.error ? `ERROR ${f.error}` : `${f.recovered ? 'recovered' : 'NOT RECOVERED'}${f.exercised ? '' : ', NOT EXERCISED'}`;
    lines.push(
      `  ${i + 1}. ${f.name} at ${((f.startedAtMs ?? 0) / 1000).toFixed(1)} s, ${((f.durationMs ?? 0) / 1000).toFixed(1)} s: ${status}; ${f.detail}`,
    );
  });
  if (r.rss) {
    const s = r.rss;
    const how =
      s.method === 'after-full-gc'
        ? 'each right after a full GC forced in the gateway, under load'
        : 'medians of 3 raw samples (no inspector)';
    lines.push(
      `RSS: start ${s.startMb} MB at ${(s.start.atMs / 1000).toFixed(1)} s (after the ${(s.warmupMs / 1000).toFixed(0)} s warm-up), end ${s.endMb} MB at ${(s.end.atMs / 1000).toFixed(1)} s (${how}): growth ${sign(s.growthPct)}% (< ${RSS_GROWTH_LIMIT_PCT}%? ${mark(s.growthPct < RSS_GROWTH_LIMIT_PCT)})`,
    );
    lines.push(
      `     max ${s.maxMb} MB of ${s.raw.samples} samples at 1/s (VmHWM ${s.peakHwmMb} MB); raw samples start ${s.raw.startMb} -> end ${s.raw.endMb} MB (${sign(s.raw.growthPct)}%, moves with GC timing)${s.start.heapUsedMb !== null ? `; V8 heap in use after GC ${s.start.heapUsedMb} -> ${s.end.heapUsedMb} MB (${sign(s.heapGrowthPct ?? 0)}%)` : ''}`,
    );
    // The controlled readings between start and end: where retained memory went (V8's heap or outside it), and whether it stopped.
    if (s.points.length > 2)
      lines.push(
        `     after each full GC (s: RSS / heap / external MB): ${s.points.map((p) => `${Math.round(p.atMs / 1000)}: ${p.rssMb} / ${p.heapUsedMb ?? '-'} / ${p.externalMb ?? '-'}`).join(', ')}`,
      );
    // RSS over time: one sample every tenth of the run.
    const step = Math.max(1, Math.floor(s.series.length / 10));
    lines.push(
      `     RSS over time (s: MB): ${s.series
        .filter((_, i) => i % step === 0 || i === s.series.length - 1)
        .map(([t, v]) => `${Math.round(t)}: ${v}`)
        .join(', ')}`,
    );
  } else lines.push('RSS: not enough samples');
  if (r.examples.length) {
    lines.push('first problems (wrong answers and unexpected 5xx first):');
    const rank = (e: Stats['examples'][number]) => (e.outcome === 'wrong' ? 0 : e.outcome === 'unexpected-5xx' ? 1 : 2);
    for (const e of [...r.examples].sort((a, b) => rank(a) - rank(b)).slice(0, 10))
      lines.push(
        `  [${e.outcome}] ${e.reason}: ${e.kind} GET ${e.path} -> ${e.status} at ${e.startMs}..${e.endMs} ms: ${e.body.replace(/\s+/g, ' ').slice(0, 200)}`,
      );
  }
  lines.push(r.pass ? 'PASS' : `FAIL: ${r.failures.join('; ')}`);
  return lines.join('\n');
}
