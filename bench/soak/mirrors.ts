/**
 * Mirrors during the soak: `mvr mirror --from <gateway> --to <folder>` (the real CLI, its own
 * process, a key of the mirror scope, the key set and the witnesses' policy it trusts), one at a
 * time for as long as the load runs, beside the load and through its faults. Runs alternate:
 * a full mirror into an empty folder, and a resumed one: started into an empty folder, stopped
 * (SIGTERM) once its first pack is in, then run again into the same folder, which continues
 * what the first fetched.
 *
 * A run that succeeds must make live a build of ours that was live while it ran. A run that
 * fails must say why with a code the registry has that fits a fault in force: FETCH_FAILED or
 * MIRROR_REFUSED while the records folder was away, a swap pruned the build being mirrored, or
 * packs were damaged; INTERRUPTED only for the run the soak stopped. Anything else is wrong.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { isErrorCode } from '../../core/errors/registry.ts';
import type { Outcome } from './exchange.ts';
import { state } from './lifecycle.ts';
import { inc, type Stats } from './stats.ts';
import type { Timeline } from './timeline.ts';
import type { Workspace } from './workspace.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** A mirror of the soak's build takes seconds; past this it is stuck, and stopped. */
const RUN_LIMIT_MS = 120_000;

export interface MirrorReport {
  runs: number;
  /** Runs that made a build live, by mode. */
  full: number;
  resumed: number;
  /** Resumed runs whose first part was stopped after a pack was in (the others finished before the stop). */
  interrupted: number;
  /** Most packs a full run fetched: a build of one pack cannot be stopped after its first and continued. */
  maxPacks: number;
  packsFetched: number;
  packsReused: number;
  recordsVerified: number;
}

interface Run {
  code: number | null;
  out: { ok?: boolean; code?: string; build?: string; packs_fetched?: number; packs_reused?: number; records_verified?: number } | null;
  start: number;
  end: number;
  stopped: boolean;
}

/** One `mvr mirror` process; with `stopAfterPack`, SIGTERM once a progress line says a pack is in. */
function mirrorOnce(ws: Workspace, url: string, to: string, policyFile: string, stopAfterPack: boolean): Promise<Run> {
  const start = performance.now();
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/mvr.js'),
      'mirror',
      '--from',
      url,
      '--to',
      to,
      '--trusted-keys',
      join(ws.publicDir, KEY_SET_PATH),
      '--policy',
      policyFile,
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT, env: { ...process.env, MVR_API_KEY: ws.mirrorKey, MVR_PROGRESS_MS: '50' } },
  );
  const handle = { kill: () => child.kill('SIGKILL') };
  state.children.add(handle);
  let stdout = '',
    stopped = false,
    pending = '';
  const limit = setTimeout(() => child.kill('SIGKILL'), RUN_LIMIT_MS);
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    if (!stopAfterPack || stopped) return;
    pending += d;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      let packs: unknown;
      try {
        packs = (JSON.parse(line) as { packs?: unknown }).packs;
      } catch {
        continue;
      }
      if (typeof packs === 'number' && packs >= 1) {
        stopped = true;
        child.kill('SIGTERM');
        return;
      }
    }
  });
  return new Promise((done) =>
    child.on('close', (code) => {
      clearTimeout(limit);
      state.children.delete(handle);
      let out: Run['out'] = null;
      try {
        out = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Run['out'];
      } catch {
        // no JSON: judged below as a refusal without a code
      }
      done({ code, out, start, end: performance.now(), stopped });
    }),
  );
}

/** Runs mirrors, one after another, until `until()` says stop. */
export async function runMirrors(args: {
  ws: Workspace;
  url: string;
  timeline: Timeline;
  stats: Stats;
  until: () => boolean;
  log: (s: string) => void;
}): Promise<MirrorReport> {
  const { ws, timeline: t, stats } = args;
  const report: MirrorReport = {
    runs: 0,
    full: 0,
    resumed: 0,
    interrupted: 0,
    maxPacks: 0,
    packsFetched: 0,
    packsReused: 0,
    recordsVerified: 0,
  };
  const policyFile = join(ws.dir, 'client.policy');
  await writeFile(policyFile, ws.witnesses.clientPolicy);
  /** Counts a run's outcome; false (it made no build live) for the judge to return. */
  const note = (run: Run, outcome: Outcome, reason: string): false => {
    const byRoute = stats.byRoute.get('mirror') ?? new Map<string, number>();
    stats.byRoute.set('mirror', byRoute);
    inc(byRoute, outcome);
    if (outcome !== 'ok') stats.count(outcome, reason);
    if (outcome === 'wrong' && stats.examples.length < 25)
      stats.examples.push({
        outcome,
        reason,
        kind: 'probe',
        route: 'mirror',
        path: 'mvr mirror',
        status: run.code ?? -1,
        startMs: t.rel(run.start),
        endMs: t.rel(run.end),
        body: JSON.stringify(run.out ?? {}).slice(0, 300),
      });
    return false;
  };
  /** Judges one run; true when it made a build live. */
  const judge = (run: Run, mode: 'full' | 'resumed'): boolean => {
    report.runs++;
    const out = run.out ?? {};
    // ok: the build is live; a stopped run may have said so just before the stop ended it.
    if (out.ok === true && (run.code === 0 || run.stopped)) {
      const build = t.builds.find((b) => b.buildId === out.build);
      if (!build) return note(run, 'wrong', `mirror made live a build that is none of ours (${String(out.build)})`);
      // Live while the mirror ran: not one a newer build had replaced for the grace period before it began.
      if (build.index < t.oldestAcceptableBuild(run.start))
        return note(run, 'wrong', `mirror made live build "${build.label}", replaced before the run began`);
      report[mode]++;
      report.packsFetched += out.packs_fetched ?? 0;
      if (mode === 'full') report.maxPacks = Math.max(report.maxPacks, out.packs_fetched ?? 0);
      report.packsReused += out.packs_reused ?? 0;
      report.recordsVerified += out.records_verified ?? 0;
      note(run, 'ok', '');
      return true;
    }
    const code = out.code ?? 'no code';
    inc(stats.refusals, code);
    if (!isErrorCode(code)) return note(run, 'wrong', `mirror refused with a code the registry does not have: ${code}`);
    if (code === 'INTERRUPTED' && run.stopped) return note(run, 'expected-refusal', 'mirror: INTERRUPTED when the soak stopped it');
    const fault = ['FETCH_FAILED', 'MIRROR_REFUSED'].includes(code)
      ? t.overlapsOutage(run.start, run.end)
        ? 'the records folder was away'
        : t.nearSwap(run.start, run.end)
          ? 'a build was swapped in (the one being mirrored pruned)'
          : t.corruptions.some((c) => run.end >= c.start && (c.end === null || run.start <= c.end + t.graceMs))
            ? 'packs were damaged'
            : null
      : null;
    if (fault) return note(run, 'expected-refusal', `mirror: ${code} while ${fault}`);
    return note(run, 'wrong', `mirror refused with ${code} outside any fault it fits (exit ${run.code})`);
  };
  for (let i = 0; !args.until(); i++) {
    const to = join(ws.dir, 'mirrors', String(i));
    if (i % 2 === 0) {
      judge(await mirrorOnce(ws, args.url, to, policyFile, false), 'full');
      continue;
    }
    const first = await mirrorOnce(ws, args.url, to, policyFile, true);
    // Finished before its first pack was reported: a full mirror, judged as one.
    if (!first.stopped || first.out?.ok === true) {
      judge(first, 'full');
      continue;
    }
    judge(first, 'resumed');
    if (first.out?.code !== 'INTERRUPTED') continue;
    report.interrupted++;
    judge(await mirrorOnce(ws, args.url, to, policyFile, false), 'resumed');
  }
  args.log(
    `mirrors: ${report.runs} runs, ${report.full} full and ${report.resumed} resumed made live (${report.interrupted} stopped after their first pack, then continued)`,
  );
  return report;
}
