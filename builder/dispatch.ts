import { type AuditProblem, type AuditProblemKind, BuildError } from '../core/errors/errors.ts';
import { AuditSigner, type Batch, type BatchResult, type WorkerInit } from './audit-signer.ts';
import { type AuditValue, readJsonFile, readLineRuns } from './inputs.ts';
import type { BuildOptions } from './options.ts';
import { OnThisThread, WorkerPool, workerScript } from './worker-pool.ts';

/**
 * The file each build worker runs: the compiled worker.js beside the compiled dispatcher, made one
 * file with its imports by `npm run build` (builder/bundle-worker.mjs). Under vitest, which runs
 * this module from the TypeScript sources, the workers run the compiled worker too
 * (dist/builder/worker.js, which `npm test` compiles first, as it does for the CLI the tests
 * run): loading worker.ts through a TypeScript loader cost each worker about half a second more
 * CPU, a loader thread of its own included.
 */
const WORKER_SCRIPT = workerScript(import.meta.url, 'dist/builder/worker.js');

/**
 * Each build worker's heap. A young generation of 8 MB rather than 16: what a batch allocates dies
 * with it, so collecting twice as often cost no CPU measured (300k audits: 284 against 285 us a
 * record), and three workers' young generations were most of what the records phase held over its
 * floor (peak RSS 224 MB against 241-270 MB at 300k audits).
 */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 8 };

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
 * number and parse the lines, so the main thread does no work per audit. With no worker
 * (`workerCount` 0, a small build's default: see ./sign-audits.ts) the same batches are signed on
 * this thread, one at a time.
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
  const pool = new BuildWorkers(init, workerCount, tally);
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
async function feedFiles(files: { path: string }[], batchSize: number, pool: BuildWorkers, tally: Tally): Promise<void> {
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

/** What signs a build's batches: its worker threads, or this thread alone (./worker-pool.ts). */
type Signers = Pick<WorkerPool<Batch, BatchResult>, 'size' | 'run' | 'failure' | 'failAll' | 'close'>;

/** What a failure of the records phase becomes: a worker that died, or a batch that could not be written (a full disk). */
function recordsFailure(how: 'died' | 'fatal', message: string, cause?: unknown): BuildError {
  return how === 'died'
    ? new BuildError(`build worker failed: ${message}`, { cause })
    : new BuildError(`writing records failed: ${message}; the previous build is still live`, { cause });
}

/** The build's signers (worker threads, or this thread alone), at most two batches in flight a worker; the first failure fails every batch after it. */
class BuildWorkers {
  private readonly pool: Signers;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly tally: Tally;
  private submittedBytes = 0;

  constructor(init: WorkerInit, count: number, tally: Tally) {
    this.tally = tally;
    const signer = count === 0 ? new AuditSigner(init, 'main') : null;
    this.pool = signer
      ? new OnThisThread<Batch, BatchResult>(
          (batch) => signer.process(batch),
          (error) => recordsFailure('fatal', error.message, error),
          () => signer.close(),
        )
      : new WorkerPool<Batch, BatchResult>(
          WORKER_SCRIPT,
          init,
          count,
          (how, why, cause) => recordsFailure(how, why.message, cause ?? why),
          RESOURCE_LIMITS,
        );
  }

  /** Sends a batch to the next worker, then waits while every worker has two batches. */
  async submit(batch: Batch): Promise<void> {
    if (this.pool.failure) throw this.pool.failure;
    // Each batch carries the input bytes read since the batch before it, counted done when its records are.
    const bytes = this.tally.bytesRead - this.submittedBytes;
    this.submittedBytes = this.tally.bytesRead;
    const answer = 'run' in batch ? this.pool.run(batch, [batch.run.bytes.buffer as ArrayBuffer]) : this.pool.run(batch);
    const tracked: Promise<void> = answer.then((result) => this.tally.add(result, bytes)).finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
    // Its failure is the pool's, thrown by the next submit or by drain: never an unhandled rejection.
    tracked.catch(() => undefined);
    while (this.inFlight.size >= this.pool.size * 2) await Promise.race(this.inFlight);
  }

  /** Waits for every batch in flight; throws the pool's failure, if any. */
  async drain(): Promise<void> {
    await Promise.all(this.inFlight);
    if (this.pool.failure) throw this.pool.failure;
  }

  /** Has every worker write out the records it still holds (see worker.ts), once every batch is done. */
  async flush(): Promise<void> {
    for (let i = 0; i < this.pool.size; i++) await this.submit({ flush: true });
    await this.drain();
  }

  /** Fails every batch in flight (the build was aborted). */
  failAll(error: Error): void {
    this.pool.failAll(error);
  }

  close(): Promise<unknown> {
    return this.pool.close();
  }
}

/** Input order: file, then line or index numerically (workers finish batches in any order). */
export function sortProblems(problems: AuditProblem[]): AuditProblem[] {
  return problems.sort((a, b) => a.source.localeCompare(b.source, 'en', { numeric: true }));
}
