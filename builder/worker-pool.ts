import { setImmediate as nextTurn } from 'node:timers/promises';
import { parentPort, type ResourceLimits, type TransferListItem, Worker } from 'node:worker_threads';

// The one pool of worker threads: the build signs in it (./dispatch.ts), a mirror verifies in it
// (mirror/verify-pool.ts). A worker answers each task `{ id, ...task }` with `{ id, ...result }`,
// or `{ id, fatal: { message, code } }` when the task failed in a way no result can say.

/** What a worker answers when a task failed outright. */
export interface WorkerFatal {
  message: string;
  code?: string;
}

/**
 * A worker's side of the pool, in the worker's script: each task answered `{ id, ...result }` (with
 * `transfer(result)` moved, not copied), or `{ id, fatal }` with the message and code of what it threw.
 */
export function answerTasks<Task extends object, Result extends object>(
  handle: (task: Task & { id: number }) => Result | Promise<Result>,
  transfer: (result: Result) => TransferListItem[] = () => [],
): void {
  const port = parentPort!;
  port.on('message', async (task: Task & { id: number }) => {
    try {
      const result = await handle(task);
      port.postMessage({ id: task.id, ...result }, transfer(result));
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      port.postMessage({ id: task.id, fatal: { message: e.message, code: e.code } } satisfies { id: number; fatal: WorkerFatal });
    }
  });
}

/**
 * The file a pool's worker runs (`compiled`, its path under the repository), compiled and bundled by
 * `npm run build` (builder/bundle-worker.mjs), beside the compiled module asking (`from`); under
 * vitest, which runs the TypeScript sources, the compiled one too.
 */
export function workerScript(from: string, compiled: string): URL {
  return new URL(from.endsWith('.ts') ? `../${compiled}` : `./${compiled.split('/').pop()}`, from);
}

/**
 * Worker threads handed tasks in turn, each task's answer a promise. The first failure (a worker
 * that died, a fatal answer, or {@link failAll}) fails every task in flight and every later one.
 */
export class WorkerPool<Task extends object, Result extends object> {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, { resolve: (r: Result) => void; reject: (e: Error) => void }>();
  private firstFailure: Error | null = null;
  private nextId = 0;
  private turn = 0;

  /**
   * @param toError the error a worker's death (`died`) or a fatal answer (`fatal`) fails the pool with
   * @param resourceLimits each worker's heap: bounded, so memory stays flat however much passes through
   */
  constructor(
    script: URL,
    workerData: unknown,
    count: number,
    private readonly toError: (how: 'died' | 'fatal', why: WorkerFatal, cause?: Error) => Error,
    resourceLimits: ResourceLimits = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 16 },
  ) {
    this.workers = Array.from({ length: count }, () => new Worker(script, { workerData, resourceLimits }));
    for (const w of this.workers) {
      w.on('message', (msg: Result & { id: number; fatal?: WorkerFatal }) => this.settle(msg));
      w.on('error', (error) => this.failAll(this.toError('died', { message: error.message }, error)));
    }
  }

  get size(): number {
    return this.workers.length;
  }

  /** The pool's first failure, or null while it has none. */
  get failure(): Error | null {
    return this.firstFailure;
  }

  /** Hands a task to the next worker (`transfer`: buffers moved, not copied); its answer. */
  run(task: Task, transfer: readonly ArrayBuffer[] = []): Promise<Result> {
    if (this.firstFailure) return Promise.reject(this.firstFailure);
    const id = this.nextId++;
    const answer = new Promise<Result>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.workers[this.turn++ % this.workers.length]!.postMessage({ id, ...task }, transfer as ArrayBuffer[]);
    return answer;
  }

  /** Fails every task in flight, and every later one; the first failure is the one reported. */
  failAll(error: Error): void {
    this.firstFailure ??= error;
    for (const p of this.pending.values()) p.reject(this.firstFailure);
    this.pending.clear();
  }

  close(): Promise<unknown> {
    return Promise.all(this.workers.map((w) => w.terminate()));
  }

  private settle(msg: Result & { id: number; fatal?: WorkerFatal }): void {
    const entry = this.pending.get(msg.id);
    this.pending.delete(msg.id);
    if (msg.fatal) {
      this.firstFailure ??= this.toError('fatal', msg.fatal);
      entry?.reject(this.firstFailure);
      return;
    }
    entry?.resolve(msg);
  }
}

/**
 * The pool's interface without a thread, for work too small to pay for one's start (a small
 * build's signing, its index and map): each task handled on this thread, one at a time, after a
 * turn of the event loop (so a server in the same process, as with `mvr dev`, answers in between).
 * What a task throws goes through `toError`, as a worker's fatal answer would; the first failure
 * fails every later task.
 */
export class OnThisThread<Task extends object, Result extends object> {
  readonly size = 1;
  private firstFailure: Error | null = null;
  private readonly handle: (task: Task) => Result | Promise<Result>;
  private readonly toError: (error: Error) => Error;
  private readonly onClose: () => void;

  constructor(handle: (task: Task) => Result | Promise<Result>, toError: (error: Error) => Error, onClose: () => void = () => undefined) {
    this.handle = handle;
    this.toError = toError;
    this.onClose = onClose;
  }

  get failure(): Error | null {
    return this.firstFailure;
  }

  async run(task: Task): Promise<Result> {
    await nextTurn();
    if (this.firstFailure) throw this.firstFailure;
    try {
      return await this.handle(task);
    } catch (error) {
      this.firstFailure ??= this.toError(error instanceof Error ? error : new TypeError(String(error)));
      throw this.firstFailure;
    }
  }

  failAll(error: Error): void {
    this.firstFailure ??= error;
  }

  async close(): Promise<void> {
    this.onClose();
  }
}
