import { Worker } from 'node:worker_threads';
import { type AuditProblem, type AuditProblemKind, BuildError } from '../core/errors.ts';
import { type AuditValue, readJsonFile, readLineRuns } from './inputs.ts';
import type { BuildOptions } from './options.ts';
import type { Batch, BatchMessage, BatchResult, WorkerInit } from './worker.ts';

/**
 * The file each build worker runs: the compiled worker.js beside the compiled dispatcher, made one
 * file with its imports by `npm run build` (builder/bundle-worker.mjs). Under vitest, which runs
 * this module from the TypeScript sources, the workers run the compiled worker too
 * (dist/builder/worker.js, which `npm test` compiles first, as it does for the CLI the tests
 * run): loading worker.ts through a TypeScript loader cost each worker about half a second more
 * CPU, a loader thread of its own included.
 */
const WORKER_SCRIPT = new URL(import.meta.url.endsWith('.ts') ? '../dist/builder/worker.js' : './worker.js', import.meta.url);

/**
 * Problems kept to report (all are counted, by kind); the first ones in input order. Enough for
 * `--json` to list every problem of a month's usual mistakes (2,000 audits of one domain), while a
 * million bad audits still cost the build a few MB, not their count.
 */
export const MAX_PROBLEMS_KEPT = 10_000;

export interface Outcome {
  /** Audits read (valid or not). */
  audits: number;
  written: number;
  counts: Record<string, number>;
  problems: AuditProblem[];
  /** Problems found of each kind, kept or not. */
  byKind: Partial<Record<AuditProblemKind, number>>;
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
  const tally = new Tally(
    opts,
    files.reduce((n, f) => n + f.size, 0),
    started,
  );
  const pool = new WorkerPool(init, workerCount, tally);
  // An abort (Ctrl-C) fails the batches in flight, as a worker's failure does (the build then says it was interrupted).
  const abort = () => pool.failAll(new BuildError(`interrupted (${String(opts.signal!.reason)})`));
  opts.signal?.addEventListener('abort', abort, { once: true });
  try {
    await feedFiles(files, opts.batchSize ?? 500, pool, tally);
    await pool.drain();
    await pool.flush();
    tally.finish();
    return tally.outcome;
  } finally {
    opts.signal?.removeEventListener('abort', abort);
    await pool.close();
  }
}

/** Reads every file into batches for the pool. Audits of `.json` files fill batches across files (a folder of many one-audit files would otherwise send a batch a file); a JSONL run is one file's lines. */
async function feedFiles(files: { path: string }[], batchSize: number, pool: WorkerPool, tally: Tally): Promise<void> {
  const onBytes = (n: number) => (tally.bytesRead += n);
  let values: AuditValue[] = [];
  for (const file of files) {
    if (file.path.endsWith('.jsonl')) {
      for await (const run of readLineRuns(file.path, batchSize, onBytes)) await pool.submit({ run });
      continue;
    }
    for await (const item of readJsonFile(file.path, tally.addProblem, onBytes)) {
      values.push(item);
      if (values.length >= batchSize) {
        await pool.submit({ values });
        values = [];
      }
    }
  }
  if (values.length > 0) await pool.submit({ values });
}

/** The build's running totals and its progress reports. */
class Tally {
  readonly outcome: Outcome = { audits: 0, written: 0, counts: {}, problems: [], byKind: {} };
  bytesRead = 0;
  private bytesDone = 0;
  private lastProgress = 0;
  private readonly opts: BuildOptions;
  private readonly totalBytes: number;
  private readonly started: number;

  constructor(opts: BuildOptions, totalBytes: number, started: number) {
    this.opts = opts;
    this.totalBytes = totalBytes;
    this.started = started;
  }

  /**
   * Keeps the first problems in input order, not in the order workers finish: trim by sorting
   * now and then, so memory stays bounded however many audits are bad.
   */
  readonly addProblem = (p: AuditProblem): void => {
    this.outcome.byKind[p.kind] = (this.outcome.byKind[p.kind] ?? 0) + 1;
    this.outcome.problems.push(p);
    if (this.outcome.problems.length >= 2 * MAX_PROBLEMS_KEPT)
      this.outcome.problems = sortProblems(this.outcome.problems).slice(0, MAX_PROBLEMS_KEPT);
  };

  /** A worker's batch done; `bytes` is the input read for it. */
  add(result: BatchResult, bytes: number): void {
    this.bytesDone += bytes;
    this.outcome.audits += result.audits;
    this.outcome.written += result.written;
    for (const [k, n] of Object.entries(result.counts)) this.outcome.counts[k] = (this.outcome.counts[k] ?? 0) + n;
    for (const p of result.problems) this.addProblem(p);
    this.progress();
  }

  /** Every batch is done: what was read after the last one (a closing bracket) counts too. */
  finish(): void {
    this.bytesDone = this.bytesRead;
    this.progress(true);
  }

  private progress(force = false): void {
    const now = performance.now();
    if (!this.opts.onProgress || (!force && now - this.lastProgress < 250)) return;
    this.lastProgress = now;
    this.opts.onProgress({
      records: this.outcome.written,
      bytesRead: this.bytesRead,
      bytesDone: this.bytesDone,
      totalBytes: this.totalBytes,
      elapsedMs: now - this.started,
    });
  }
}

/** The build's worker threads, batches handed out in turn; the first failure fails every batch after it. */
class WorkerPool {
  private readonly workers: Worker[];
  /** Each batch carries the input bytes read since the batch before it, counted done when its records are. */
  private readonly pending = new Map<number, { resolve: () => void; reject: (e: Error) => void; bytes: number }>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly tally: Tally;
  private failure: Error | null = null;
  private nextId = 0;
  private turn = 0;
  private submittedBytes = 0;

  constructor(init: WorkerInit, count: number, tally: Tally) {
    this.tally = tally;
    // Bounded heaps keep the build's memory flat however many audits pass through.
    const resourceLimits = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 16 };
    this.workers = Array.from({ length: count }, () => new Worker(WORKER_SCRIPT, { workerData: init, resourceLimits }));
    for (const w of this.workers) {
      w.on('message', (msg: BatchResult | { id: number; fatal: { message: string; code?: string } }) => this.settle(msg));
      w.on('error', (error) => this.failAll(new BuildError(`build worker failed: ${error.message}`, { cause: error })));
    }
  }

  /** Sends a batch to the next worker, then waits while every worker has two batches. */
  async submit(batch: Batch): Promise<void> {
    if (this.failure) throw this.failure;
    const id = this.nextId++;
    const p = new Promise<void>((resolve, reject) =>
      this.pending.set(id, { resolve, reject, bytes: this.tally.bytesRead - this.submittedBytes }),
    );
    this.submittedBytes = this.tally.bytesRead;
    const tracked = p.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
    const worker = this.workers[this.turn++ % this.workers.length]!;
    if ('run' in batch) worker.postMessage({ id, run: batch.run } satisfies BatchMessage, [batch.run.bytes.buffer]);
    else worker.postMessage({ id, ...batch } satisfies BatchMessage);
    while (this.inFlight.size >= this.workers.length * 2) await Promise.race(this.inFlight);
  }

  /** Waits for every batch in flight; throws the pool's failure, if any. */
  async drain(): Promise<void> {
    await Promise.all(this.inFlight);
    if (this.failure) throw this.failure;
  }

  /** Has every worker write out the records it still holds (see worker.ts), once every batch is done. */
  async flush(): Promise<void> {
    for (let i = 0; i < this.workers.length; i++) await this.submit({ flush: true });
    await this.drain();
  }

  /** Fails every batch in flight (a worker died, or the build was aborted); the first failure is the one reported. */
  failAll(error: Error): void {
    this.failure ??= error;
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
  }

  close(): Promise<unknown> {
    return Promise.all(this.workers.map((w) => w.terminate()));
  }

  private settle(msg: BatchResult | { id: number; fatal: { message: string; code?: string } }): void {
    const entry = this.pending.get(msg.id);
    this.pending.delete(msg.id);
    if ('fatal' in msg) {
      this.failure ??= new BuildError(`writing records failed: ${msg.fatal.message}; the previous build is still live`);
      entry?.reject(this.failure);
      return;
    }
    this.tally.add(msg, entry?.bytes ?? 0);
    entry?.resolve();
  }
}

/** Input order: file, then line or index numerically (workers finish batches in any order). */
export function sortProblems(problems: AuditProblem[]): AuditProblem[] {
  return problems.sort((a, b) => a.source.localeCompare(b.source, 'en', { numeric: true }));
}
