import { readFile, rename, writeFile } from 'node:fs/promises';
import { KEY_SET_PATH, MvrError } from '@merchant-verify/verifier';
import { activeKid, keygen } from '../../keyring/signing-keys.ts';
import { editLiveRecord, livePackFile, replaceLiveRecord } from '../../test/support/packs.ts';
import type { Checker } from './check.ts';
import type { Exchange, Planned, Verdict } from './exchange.ts';
import { DAMAGED_INDEXES, HOT_COUNT, type Mix } from './load.ts';
import { inc } from './stats.ts';
import type { Corruption, StoreOutage, Timeline } from './timeline.ts';
import { buildAndMark, changeScores, type Workspace } from './workspace.ts';

export interface FaultReport {
  name: string;
  /** ms since the load started. */
  scheduledAtMs: number;
  startedAtMs: number | null;
  durationMs: number | null;
  /** Injected and seen by the load (e.g. at least one 503 during the outage). */
  exercised: boolean;
  /** The gateway answered correctly again by itself, without a restart. */
  recovered: boolean;
  /** From the end of the fault to the first correct answer of the probe. */
  recoveryMs: number | null;
  detail: string;
  error?: string;
}

export interface FaultContext {
  ws: Workspace;
  timeline: Timeline;
  mix: Mix;
  checker: Checker;
  send: (p: Planned) => Promise<Exchange>;
  getJson: (path: string) => Promise<unknown>;
  seconds: number;
  signal: AbortSignal;
  log: (s: string) => void;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** Faults a run injects (runFaults' schedule). */
export const FAULT_COUNT = 5;

/** How long the records folder stays away, and the damaged records stay damaged. */
const OUTAGE_MS = 2000;
const DAMAGE_MS = 2500;

/**
 * Asks until the answer is right: at most 200 tries and 10 s. Returns the ms it took, or null.
 * Each try is checked and counted like any other request.
 */
async function probe(ctx: FaultContext, make: () => Planned, accept: (v: Verdict) => boolean): Promise<number | null> {
  const started = performance.now();
  for (let i = 0; i < 200 && performance.now() - started < 10_000 && !ctx.signal.aborted; i++) {
    const verdict = await ctx.checker.record(await ctx.send(make()));
    if (accept(verdict)) return Math.round(performance.now() - started);
    await sleep(50, ctx.signal);
  }
  return null;
}

/** The five faults, each once, at fixed fractions of the run; one at a time, each after the last. */
export async function runFaults(ctx: FaultContext): Promise<FaultReport[]> {
  const schedule: { at: number; name: string; run: (ctx: FaultContext, r: FaultReport) => Promise<void> }[] = [
    { at: 0.15, name: 'rebuild with changed scores', run: rebuild },
    { at: 0.35, name: `records folder away ${OUTAGE_MS / 1000} s`, run: outage },
    { at: 0.5, name: 'damaged records in their packs', run: damage },
    { at: 0.65, name: 'key rotation (keygen + build)', run: rotation },
    { at: 0.8, name: 'witness outage (a build while every witness is down)', run: witnessOutage },
  ];
  const reports: FaultReport[] = [];
  for (const f of schedule) {
    const at = ctx.timeline.t0 + f.at * ctx.seconds * 1000;
    const report: FaultReport = {
      name: f.name,
      scheduledAtMs: ctx.timeline.rel(at),
      startedAtMs: null,
      durationMs: null,
      exercised: false,
      recovered: false,
      recoveryMs: null,
      detail: '',
    };
    reports.push(report);
    await sleep(at - performance.now(), ctx.signal);
    if (ctx.signal.aborted) {
      report.error = 'not run: the soak was stopped';
      continue;
    }
    const started = performance.now();
    report.startedAtMs = ctx.timeline.rel(started);
    ctx.log(`fault: ${f.name} (at ${(report.startedAtMs / 1000).toFixed(1)} s)`);
    try {
      await f.run(ctx, report);
    } catch (error) {
      report.error = (error as Error).message;
    }
    report.durationMs = Math.round(performance.now() - started);
    ctx.log(`fault: ${f.name}: ${report.detail}${report.error ? ` ERROR ${report.error}` : ''}`);
  }
  return reports;
}

/** (1) Change some scores (every hot domain among them) and swap a new build in. */
async function rebuild(ctx: FaultContext, r: FaultReport): Promise<void> {
  const changed = await changeScores(ctx.ws, (i) => i < HOT_COUNT || i % 7 === 3);
  const before = ctx.checker.stats.total;
  const { mark, summary } = await buildAndMark(ctx.ws, ctx.timeline, 'rebuild', 1);
  const hot = ctx.ws.domains[0]!;
  const expected = mark.scores[0];
  r.recoveryMs = await probe(
    ctx,
    () => ctx.mix.record(hot, 'probe'),
    (v) => v.outcome === 'ok' && v.record?.issued_at === mark.issuedAt && v.record.score === expected,
  );
  r.recovered = r.recoveryMs !== null;
  r.exercised = ctx.checker.stats.total > before;
  r.detail = `${changed} scores changed; build of ${summary.records} records took ${(summary.durationMs / 1000).toFixed(1)} s; a probe saw the new scores ${r.recoveryMs ?? 'never'} ms after runBuild returned`;
}

/** (2) Rename the records folder away, wait, rename it back. */
async function outage(ctx: FaultContext, r: FaultReport): Promise<void> {
  const stats = ctx.checker.stats;
  const reason = 'STORE_UNAVAILABLE while the records folder was away';
  const before503 = stats.expected503.get(reason) ?? 0,
    beforeValid = stats.validWhileAway,
    beforeNever = stats.neverAuditedWhileAway;
  const away = `${ctx.ws.recordsDir}.away`;
  const o: StoreOutage = { start: performance.now(), awayDone: null, restoreStart: null, end: null };
  ctx.timeline.outages.push(o);
  try {
    await rename(ctx.ws.recordsDir, away);
    o.awayDone = performance.now();
    await sleep(OUTAGE_MS, ctx.signal);
  } finally {
    o.restoreStart = performance.now();
    await rename(away, ctx.ws.recordsDir).catch(() => undefined);
    o.end = performance.now();
  }
  r.recoveryMs = await probe(
    ctx,
    () => ctx.mix.record(ctx.mix.coldDomain(), 'probe', false),
    (v) => v.outcome === 'ok',
  );
  r.recovered = r.recoveryMs !== null;
  const n503 = (stats.expected503.get(reason) ?? 0) - before503;
  r.exercised = n503 > 0;
  r.detail = `${n503} x 503 STORE_UNAVAILABLE (expected), ${stats.validWhileAway - beforeValid} valid cached records and ${stats.neverAuditedWhileAway - beforeNever} never-audited answers (from the live build's map) answered before the gateway noticed (allowed only in its first second); a probe got a cold record again ${r.recoveryMs ?? 'never'} ms after the folder came back`;
}

/** (3) Damage two records of the live build in their packs: garbage, and a valid-JSON tampered score (same lengths, so no other record moves). */
async function damage(ctx: FaultContext, r: FaultReport): Promise<void> {
  const stats = ctx.checker.stats;
  const reason = 'UNAVAILABLE for the damaged record';
  const before = stats.expected503.get(reason) ?? 0;
  const domains = DAMAGED_INDEXES.map((i) => ctx.ws.domains[i]!);
  const files = [...new Set(await Promise.all(domains.map((d) => livePackFile(ctx.ws, d))))];
  const originals = await Promise.all(files.map((f) => readFile(f)));
  const c: Corruption = { domains: new Set(domains), start: performance.now(), corruptDone: null, restoreStart: null, end: null };
  ctx.timeline.corruptions.push(c);
  const replace = async (file: string, bytes: Buffer | string) => {
    await writeFile(`${file}.soak-tmp`, bytes);
    await rename(`${file}.soak-tmp`, file);
  };
  try {
    await replaceLiveRecord(ctx.ws, domains[0]!, '\u0000garbage{"x":');
    await editLiveRecord(ctx.ws, domains[1]!, (record) => {
      const score = record.score as number | null;
      // A lower score is never longer: the record keeps its length in its pack.
      return JSON.stringify({ ...record, score: score === null || score < 1 ? 0.5 : score - 1 });
    });
    c.corruptDone = performance.now();
    ctx.timeline.targets = domains;
    await sleep(DAMAGE_MS, ctx.signal);
  } finally {
    c.restoreStart = performance.now();
    await Promise.all(files.map((f, i) => replace(f, originals[i]!).catch(() => undefined)));
    c.end = performance.now();
  }
  let worst: number | null = 0;
  for (const d of domains) {
    const ms = await probe(
      ctx,
      () => ctx.mix.record(d, 'probe', false),
      (v) => v.outcome === 'ok',
    );
    worst = ms === null || worst === null ? null : Math.max(worst, ms);
  }
  ctx.timeline.targets = [];
  r.recoveryMs = worst;
  r.recovered = worst !== null;
  const n503 = (stats.expected503.get(reason) ?? 0) - before;
  r.exercised = n503 > 0;
  r.detail = `${domains.join(', ')}: ${n503} x 503 UNAVAILABLE (expected); a probe got them again ${worst ?? 'never'} ms after their packs were restored`;
}

/** (4) New signing key, then a build signed with it; the old key must stay listed. */
async function rotation(ctx: FaultContext, r: FaultReport): Promise<void> {
  const stats = ctx.checker.stats;
  const oldKid = await activeKid(ctx.ws.keysDir);
  const newKid = await keygen(ctx.ws.keysDir);
  const refetchesBefore = stats.keySetFetches,
    afterRefetchBefore = stats.verifiedAfterRefetch;
  await buildAndMark(ctx.ws, ctx.timeline, 'rotation', 1);
  const hot = ctx.ws.domains[1]!;
  r.recoveryMs = await probe(
    ctx,
    () => ctx.mix.record(hot, 'probe'),
    (v) => v.outcome === 'ok' && v.record?.key_id === newKid,
  );
  const keySet = (await ctx.getJson(KEY_SET_PATH)) as { keys?: { kid?: string }[] };
  const kids = (keySet.keys ?? []).map((k) => k.kid);
  const bothListed = kids.includes(oldKid ?? '') && kids.includes(newKid);
  r.recovered = r.recoveryMs !== null && bothListed;
  r.exercised = stats.verifiedAfterRefetch > afterRefetchBefore;
  r.detail = `${oldKid?.slice(0, 8)}... -> ${newKid.slice(0, 8)}...; key set lists ${kids.length} keys, old ${kids.includes(oldKid ?? '') ? 'still listed' : 'MISSING'}, new ${kids.includes(newKid) ? 'listed' : 'MISSING'}; ${stats.keySetFetches - refetchesBefore} key-set refetch(es) on UNKNOWN_KEY; a probe saw records of the new key ${r.recoveryMs ?? 'never'} ms after runBuild returned`;
}

/**
 * (5) Every witness unreachable from the build: the build must be refused (WITNESS_QUORUM_NOT_MET)
 * and the live build stay live, answers still verifying under the witnesses' policy; once the
 * witnesses are back, a build goes live again.
 */
async function witnessOutage(ctx: FaultContext, r: FaultReport): Promise<void> {
  const stats = ctx.checker.stats;
  const before = stats.total;
  let refusal = 'none: the build went live';
  await ctx.ws.witnesses.setDown(['a', 'b', 'c']);
  try {
    await buildAndMark(ctx.ws, ctx.timeline, 'witness outage', 1);
  } catch (error) {
    refusal = error instanceof MvrError ? error.code : `no code (${(error as Error).message})`;
  } finally {
    await ctx.ws.witnesses.setDown([]);
  }
  inc(stats.refusals, refusal);
  if (refusal !== 'WITNESS_QUORUM_NOT_MET') throw new Error(`the build without witnesses: expected WITNESS_QUORUM_NOT_MET, got ${refusal}`);
  stats.count('expected-refusal', 'build: WITNESS_QUORUM_NOT_MET while every witness was down');
  const answeredDuring = stats.total - before;
  const { mark } = await buildAndMark(ctx.ws, ctx.timeline, 'witnesses back', 1);
  const hot = ctx.ws.domains[2]!;
  r.recoveryMs = await probe(
    ctx,
    () => ctx.mix.record(hot, 'probe'),
    (v) => v.outcome === 'ok' && v.record?.issued_at === mark.issuedAt,
  );
  r.recovered = r.recoveryMs !== null;
  r.exercised = answeredDuring > 0;
  r.detail = `the build was refused with ${refusal} and the live build stayed live (${answeredDuring.toLocaleString('en-US')} answers checked meanwhile); with the witnesses back a build went live and a probe saw it ${r.recoveryMs ?? 'never'} ms after runBuild returned`;
}
