import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { generateAudits } from './generate-audits.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');

export interface BuildBenchRow {
  audits: number;
  seconds: number;
  recordsPerSecond: number;
  peakRssMb: number;
  /** Whether the kernel's caches were dropped before the build ({@link dropCaches}). */
  coldCaches: boolean;
  /** CPU time (user + system) of the build's process, its worker threads included, start-up and all. */
  cpuSeconds: number;
  /** Of `seconds`, each phase's (`mvr build --json`'s `phases_ms`); `start` is what comes before the first. */
  phaseSeconds: Record<string, number>;
  /** Of `seconds`, the transparency log step (append, tiles, checkpoint), and what it wrote. */
  logSeconds: number;
  logBytes: number;
  /** Of `seconds`, the domain map and build statement step, and the map's size on disk. */
  mapSeconds: number;
  mapBytes: number;
  /** Of `seconds`, sorting, hashing and writing the packs and the pack index; how many packs, their bytes. */
  packSeconds: number;
  packFiles: number;
  packBytes: number;
}

/** Where {@link retire} moves old outputs; `npm run bench` removes it once its measurements are done. */
export const RETIRED = 'retired';

/**
 * Moves an old output out of the way (a rename) instead of deleting it before a measurement.
 * This machine's ext4 has no journal, and without one, creating a file skips over every inode
 * freed in the last minute or more (`recently_deleted()` in the kernel's inode allocator, one
 * buffer lookup each): a build started right after a 100k-file build was removed spent a
 * quarter of its CPU there (perf) and ran 20-30% slower. The monthly build never follows
 * such a removal, so the benchmark should not either.
 */
export async function retire(outDir: string, path: string): Promise<void> {
  if (!existsSync(path)) return;
  await mkdir(join(outDir, RETIRED), { recursive: true });
  await rename(path, join(outDir, RETIRED, `${basename(path)}-${process.pid}-${Date.now()}`));
}

/** Removes the retired outputs: rm(1) rather than fs.rm, which held about 1 GB removing a million-file build. */
export async function removeRetired(outDir: string): Promise<void> {
  await run('rm', ['-rf', join(outDir, RETIRED)]);
}

/**
 * Waits until every dirty page is on disk (sync(1)); returns the seconds it took. Run before each
 * measurement: a build leaves up to gigabytes of written files in the page cache, and the
 * kernel's writeback threads would otherwise write them out on these same two cores while the
 * next thing (a raw capacity run, the next build, the gateway's rounds) is being measured.
 */
export async function settleDisk(): Promise<number> {
  const started = performance.now();
  await run('sync', []);
  return (performance.now() - started) / 1000;
}

/** Writes `count` synthetic audits (seed 42) once and reuses them. */
export async function auditsFile(outDir: string, count: number): Promise<string> {
  const dir = join(outDir, `audits-${count}`);
  const file = join(dir, 'audits.jsonl');
  if (!existsSync(file)) {
    await mkdir(dir, { recursive: true });
    const out = createWriteStream(file);
    await generateAudits(count, 42, out);
    out.end();
    await once(out, 'finish');
  }
  return dir;
}

/**
 * Runs the real `mvr build` (the CLI, in its own process, signing with a fresh key) on `count`
 * audits and reads its `--json` summary: wall time of the build up to the swap, and peak RSS of
 * the process with its worker threads.
 */
export async function benchBuild(outDir: string, count: number, opts: { coldCaches: boolean; tree?: boolean }): Promise<BuildBenchRow> {
  const audits = await auditsFile(outDir, count);
  const work = join(outDir, `build-${count}`);
  await retire(outDir, work);
  // Audits just generated (a gigabyte at 1M) are still being written out otherwise.
  await settleDisk();
  const cold = opts.coldCaches && (await dropCaches());
  // What the build reads is read once first, as on a runner that has just checked it out and
  // installed: the audits, and node, tsx and the CLI's modules (keygen loads them).
  if (cold) for await (const _ of createReadStream(join(audits, 'audits.jsonl'), { highWaterMark: 1 << 20 }));
  const keys = join(work, 'keys');
  await run(process.execPath, [join(ROOT, 'bin/mvr.js'), 'keygen', '--keys', keys]);
  // As the monthly build runs: with a log key, so every record is appended to the log too.
  await run(process.execPath, [join(ROOT, 'bin/mvr.js'), 'keygen', '--log', '--keys', keys]);
  const cpuBefore = childrenCpuSeconds();
  const { stdout } = await run(
    process.execPath,
    [
      join(ROOT, 'bin/mvr.js'),
      'build',
      ...(opts.tree ? ['--tree'] : []),
      '--json',
      '--audits',
      audits,
      '--records',
      join(work, 'records'),
      '--public',
      join(work, 'public'),
      '--keys',
      keys,
      '--now',
      '2026-11-01T00:00:00Z',
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const cpuSeconds = childrenCpuSeconds() - cpuBefore;
  // `mvr build --json` names its members in snake_case.
  const summary = JSON.parse(stdout) as {
    records: number;
    duration_ms: number;
    records_per_second: number;
    peak_rss_mb: number;
    phases_ms: Record<string, number>;
    log: { duration_ms: number; bytes: number };
    domain_map: { duration_ms: number; bytes: number };
    packs: { duration_ms: number; files: number; bytes: number };
  };
  if (summary.records !== count) throw new Error(`built ${summary.records} records from ${count} audits`);
  // The records of a million-audit build take a few GB; only the last size's are kept for the gateway bench.
  return {
    audits: count,
    seconds: summary.duration_ms / 1000,
    recordsPerSecond: summary.records_per_second,
    peakRssMb: summary.peak_rss_mb,
    coldCaches: cold,
    cpuSeconds,
    phaseSeconds: phaseSeconds(summary.duration_ms, summary.phases_ms),
    logSeconds: summary.log.duration_ms / 1000,
    logBytes: summary.log.bytes,
    mapSeconds: summary.domain_map.duration_ms / 1000,
    mapBytes: summary.domain_map.bytes,
    packSeconds: summary.packs.duration_ms / 1000,
    packFiles: summary.packs.files,
    packBytes: summary.packs.bytes,
  };
}

/** Each phase's seconds up to the swap, with `start` (the lock, the inputs read) for what comes before the first; not `prune`, which comes after. */
function phaseSeconds(durationMs: number, phasesMs: Record<string, number>): Record<string, number> {
  const { prune: _, ...measured } = phasesMs;
  const start = durationMs - Object.values(measured).reduce((a, b) => a + b, 0);
  return Object.fromEntries(Object.entries({ start, ...measured }).map(([k, ms]) => [k, ms / 1000]));
}

/**
 * CPU seconds (user + system) of this process's children that have ended and been waited for
 * (`cutime` and `cstime` of /proc/self/stat, in clock ticks of 1/100 s): read around a child's
 * run, its own CPU time, whatever else the machine does meanwhile.
 */
function childrenCpuSeconds(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // After the command's name: state is field 3, cutime field 16, cstime field 17.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/**
 * Empties the kernel's page, dentry and inode caches (`/proc/sys/vm/drop_caches`; root only,
 * false when not allowed), after settleDisk so that every page is clean. Why before a build:
 * this VM's kernel is booted with `ihash_entries=65536 dhash_entries=131072` (/proc/cmdline),
 * hash tables sized for a small machine, where a default kernel on 24 GiB sizes them by memory
 * (millions of buckets). With the million files of the previous builds cached, every file a
 * build creates walks chains of 15-35 inodes and 10 or more dentries: a 1M build ran at
 * 6,240-6,793 records/s (0.44x-0.45x raw) with 1.0-1.4 million inodes cached, and at
 * 8,604-8,607 records/s (0.58x-0.59x) with the caches dropped, alternating. The monthly build
 * runs on a fresh CI runner, with nothing cached.
 */
export async function dropCaches(): Promise<boolean> {
  try {
    await writeFile('/proc/sys/vm/drop_caches', '3\n');
    return true;
  } catch {
    return false;
  }
}
