import { Worker } from 'node:worker_threads';
import { BuildError, type AuditProblem } from '../core/errors.ts';
import type { BuildOptions } from './options.ts';
import { readJsonFile, readLineRuns, type AuditValue } from './inputs.ts';
import type { Batch, BatchMessage, BatchResult, WorkerInit } from './worker.ts';

/**
 * The file each build worker runs: the compiled worker.js beside the compiled dispatcher. Under
 * vitest, which runs this module from the TypeScript sources, the workers run the compiled worker
 * too (dist/builder/worker.js, which `npm test` compiles first, as it does for the CLI the tests
 * run): loading worker.ts through a TypeScript loader cost each worker about half a second more
 * CPU, a loader thread of its own included.
 */
const WORKER_SCRIPT = new URL(import.meta.url.endsWith('.ts') ? '../dist/builder/worker.js' : './worker.js', import.meta.url);

/** Problems kept to report (all are counted); the first ones in input order. */
export const MAX_PROBLEMS_KEPT = 1000;

export interface Outcome {
  /** Audits read (valid or not). */
  audits: number;
  written: number;
  counts: Record<string, number>;
  problems: AuditProblem[];
  problemCount: number;
  duplicates: Set<string>;
}

/**
 * Streams every file through a pool of workers, at most two batches in flight per worker. A
 * JSONL file goes as runs of whole lines, bytes handed over without a copy; the workers decode,
 * number and parse the lines, so the main thread does no work per audit.
 */
export async function processAll(
  files: { path: string; size: number }[],
  init: WorkerInit,
  workerCount: number,
  opts: BuildOptions,
  started: number,
): Promise<Outcome> {
  const batchSize = opts.batchSize ?? 500;
  const totalBytes = files.reduce((n, f) => n + f.size, 0);
  const outcome: Outcome = {
    audits: 0,
    written: 0,
    counts: {},
    problems: [],
    problemCount: 0,
    duplicates: new Set(),
  };
  let bytesRead = 0, bytesDone = 0, lastProgress = 0;
  // Keep the first problems in input order, not in the order workers finish: trim by sorting
  // now and then, so memory stays bounded however many audits are bad.
  const addProblem = (p: AuditProblem) => {
    outcome.problemCount++;
    outcome.problems.push(p);
    if (outcome.problems.length >= 2 * MAX_PROBLEMS_KEPT) outcome.problems = sortProblems(outcome.problems).slice(0, MAX_PROBLEMS_KEPT);
  };
  const progress = (force = false) => {
    const now = performance.now();
    if (!opts.onProgress || (!force && now - lastProgress < 250)) return;
    lastProgress = now;
    opts.onProgress({ records: outcome.written, bytesRead, bytesDone, totalBytes, elapsedMs: now - started });
  };

  // Bounded heaps keep the build's memory flat however many audits pass through.
  const resourceLimits = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 16 };
  const workers = Array.from({ length: workerCount }, () => new Worker(WORKER_SCRIPT, { workerData: init, resourceLimits }));
  // Each batch carries the input bytes read since the batch before it, counted done when its records are.
  const pending = new Map<number, { resolve: () => void; reject: (e: Error) => void; bytes: number }>();
  let failure: Error | null = null;
  for (const w of workers) {
    w.on('message', (msg: BatchResult | { id: number; fatal: { message: string; code?: string } }) => {
      const entry = pending.get(msg.id);
      pending.delete(msg.id);
      if ('fatal' in msg) {
        failure ??= new BuildError(`writing records failed: ${msg.fatal.message}; the previous build is still live`);
        entry?.reject(failure);
        return;
      }
      bytesDone += entry?.bytes ?? 0;
      outcome.audits += msg.audits;
      outcome.written += msg.written;
      for (const [k, n] of Object.entries(msg.counts)) outcome.counts[k] = (outcome.counts[k] ?? 0) + n;
      for (const p of msg.problems) addProblem(p);
      for (const d of msg.duplicates) outcome.duplicates.add(d.domain);
      progress();
      entry?.resolve();
    });
    w.on('error', (error) => {
      failure ??= new BuildError(`build worker failed: ${error.message}`, { cause: error });
      for (const p of pending.values()) p.reject(failure);
      pending.clear();
    });
  }

  // An abort (Ctrl-C) fails the batches in flight, as a worker's failure does (the build then says it was interrupted).
  const abort = () => {
    failure ??= new BuildError(`interrupted (${String(opts.signal!.reason)})`);
    for (const p of pending.values()) p.reject(failure);
    pending.clear();
  };
  opts.signal?.addEventListener('abort', abort, { once: true });

  let nextId = 0, turn = 0, submittedBytes = 0;
  const inFlight = new Set<Promise<void>>();
  const submit = async (batch: Batch) => {
    if (failure) throw failure;
    const id = nextId++;
    const p = new Promise<void>((resolve, reject) => pending.set(id, { resolve, reject, bytes: bytesRead - submittedBytes }));
    submittedBytes = bytesRead;
    const tracked = p.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    const worker = workers[turn++ % workers.length]!;
    if ('run' in batch) worker.postMessage({ id, run: batch.run } satisfies BatchMessage, [batch.run.bytes.buffer]);
    else worker.postMessage({ id, values: batch.values } satisfies BatchMessage);
    while (inFlight.size >= workers.length * 2) await Promise.race(inFlight);
  };

  try {
    const onBytes = (n: number) => (bytesRead += n);
    // Audits of `.json` files fill batches across files (a folder of many one-audit files would
    // otherwise send a batch a file); a JSONL run is one file's lines.
    let values: AuditValue[] = [];
    for (const file of files) {
      if (file.path.endsWith('.jsonl')) {
        for await (const run of readLineRuns(file.path, batchSize, onBytes)) await submit({ run });
        continue;
      }
      for await (const item of readJsonFile(file.path, addProblem, onBytes)) {
        values.push(item);
        if (values.length >= batchSize) {
          await submit({ values });
          values = [];
        }
      }
    }
    if (values.length > 0) await submit({ values });
    await Promise.all(inFlight);
    if (failure) throw failure;
    bytesDone = bytesRead; // every batch is done: what was read after the last one (a closing bracket) counts too
    progress(true);
    return outcome;
  } finally {
    opts.signal?.removeEventListener('abort', abort);
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Input order: file, then line or index numerically (workers finish batches in any order). */
export function sortProblems(problems: AuditProblem[]): AuditProblem[] {
  return problems.sort((a, b) => a.source.localeCompare(b.source, 'en', { numeric: true }));
}

