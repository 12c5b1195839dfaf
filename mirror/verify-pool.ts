import { availableParallelism } from 'node:os';
import { WorkerPool, workerScript } from '../builder/worker-pool.ts';
import { MvrError } from '../core/errors/errors.ts';
import type { CheckKeys } from '../core/rules/key-trust.ts';
import type { ServeRuleAnswer, ServeRuleCheck, ServeRuleTask } from './serve-rule-check.ts';

/** The compiled verifying worker (see builder/worker-pool.ts). */
const VERIFY_WORKER = workerScript(import.meta.url, 'dist/mirror/verify-worker.js');

/**
 * The serve rule in one worker a core, a pack a task: the record checks are a signature
 * verification each, and the main thread fetches, checks the packs' hashes and places, and the
 * log entries meanwhile. `close` when the mirror is done.
 */
export function verifyingPool(keys: CheckKeys): { check: ServeRuleCheck; close: () => Promise<unknown> } {
  const pool = new WorkerPool<ServeRuleTask, ServeRuleAnswer>(
    VERIFY_WORKER,
    keys,
    availableParallelism(),
    (how, why) => new MvrError('INTERNAL', `a mirror's verifying worker ${how === 'died' ? 'died' : 'failed'}: ${why.message}`),
  );
  // The leaves and ends are the task's own copies: moved to the worker; the pack is in shared memory (./pack-pool.ts).
  return {
    check: (task) => pool.run(task, [task.leaves.buffer as ArrayBuffer, task.ends.buffer as ArrayBuffer]),
    close: () => pool.close(),
  };
}
