import { BuildError, isErrorCode, MvrError } from '../core/errors/errors.ts';
import { IndexAndMap, type Indexed, type IndexInit, type IndexTask, type Mapped } from './index-and-map.ts';
import { OnThisThread, type WorkerFatal, WorkerPool, workerScript } from './worker-pool.ts';

/** The file the thread runs, compiled and bundled as the signing workers' is (see ./dispatch.ts). */
const INDEX_SCRIPT = workerScript(import.meta.url, 'dist/builder/index-worker.js');

/**
 * The thread's heap, capped: a young generation of 8 MB (the main thread's grew to 32 MB over
 * these phases), and an old generation well above the few tens of MB they keep alive at a million
 * records (the map's leaves and the packs' places are buffers, outside it).
 */
const RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 128 };

/**
 * Records from which the index and map run in a thread: a thread costs about a tenth to a quarter of a
 * second of CPU to start (decision 0062), more than a small build's index and map take, and what they
 * keep is worth returning only for large builds (a few MB at 10,000 records; the map's leaves alone are
 * 78 MB at a million).
 */
export const INDEX_THREAD_FROM = 20_000;

/**
 * The index and map phases, in a thread of their own from {@link INDEX_THREAD_FROM} records (decision
 * 0098): on the main thread, its heap and allocator kept what those phases freed (a million records
 * peaked at 311-320 MB there, 222-234 MB in this thread); a thread's heap is capped and given back when
 * it ends. {@link close} ends it, before the log. Below that size the same work runs on the build's thread.
 */
export class IndexThread {
  private readonly pool: Pick<WorkerPool<IndexTask, Indexed | Mapped>, 'run' | 'close'>;

  constructor(init: IndexInit, inThread: boolean) {
    if (!inThread) {
      const work = new IndexAndMap(init);
      this.pool = new OnThisThread<IndexTask, Indexed | Mapped>((task) => work.run(task), indexFailure);
      return;
    }
    this.pool = new WorkerPool<IndexTask, Indexed | Mapped>(
      INDEX_SCRIPT,
      init,
      1,
      (_how, why, cause) => indexFailure(why, cause),
      RESOURCE_LIMITS,
    );
  }

  /** The index, packs and build id; or, and nothing else, the domains audited twice. */
  index(): Promise<Indexed> {
    return this.pool.run({ step: 'index' }) as Promise<Indexed>;
  }

  /** The domain map, statement and compact answers; where each record is in the packs. */
  map(): Promise<Mapped> {
    return this.pool.run({ step: 'map' }) as Promise<Mapped>;
  }

  /** Ends the thread, if any: its heap is given back. */
  async close(): Promise<unknown> {
    return this.pool.close();
  }
}

/**
 * What a failure of the index or map becomes, the same wherever they ran (a thread hands over only
 * its error's message and code, `WorkerFatal`): one of ours as it is; anything else (a full disk, a
 * file too large) one BuildError naming the step, with what failed (and its code) as its cause.
 */
export function indexFailure(failed: WorkerFatal | Error, cause: unknown = failed): Error {
  if (failed instanceof MvrError) return failed;
  const code = (failed as { code?: unknown }).code;
  if (isErrorCode(code)) return new MvrError(code, failed.message);
  return new BuildError(`writing the index and domain map failed: ${failed.message}; the previous build is still live`, { cause });
}
