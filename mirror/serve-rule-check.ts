import { RecordUnavailableError } from '../core/errors/errors.ts';
import type { CheckKeys } from '../core/rules/key-trust.ts';
import { checkServeRule } from '../service/serve-rule.ts';

// The serve rule over a pack's records, the one check of a mirror that costs a signature
// verification a record: run here, or in worker threads (./verify-pool.ts, ./verify-worker.ts).

/** A pack's records to check: each one's domain and range in the pack, and the entries of their map leaves (`entrySize` bytes each; none in a v1 build). */
export interface ServeRuleTask {
  pack: Uint8Array;
  records: { domain: string; start: number; end: number }[];
  entries: Uint8Array;
  entrySize: number;
}

/** The first record that does not pass (its position in the task and why), or null. */
export interface ServeRuleAnswer {
  bad: { at: number; message: string } | null;
}

/** Checks a task's records in turn, here. */
export function checkServeRules(task: ServeRuleTask, keys: CheckKeys): ServeRuleAnswer {
  const pack = Buffer.from(task.pack.buffer, task.pack.byteOffset, task.pack.byteLength);
  for (const [at, { domain, start, end }] of task.records.entries()) {
    const entry = task.entrySize === 0 ? null : task.entries.subarray(at * task.entrySize, (at + 1) * task.entrySize);
    try {
      checkServeRule(domain, pack.subarray(start, end), keys, entry);
    } catch (error) {
      if (!(error instanceof RecordUnavailableError)) throw error;
      return { bad: { at, message: error.message } };
    }
  }
  return { bad: null };
}

/** Runs the serve rule over a task: here, or in a pool of workers. */
export type ServeRuleCheck = (task: ServeRuleTask) => Promise<ServeRuleAnswer>;

/** The serve rule run in this thread. */
export function serveRuleHere(keys: CheckKeys): ServeRuleCheck {
  return async (task) => checkServeRules(task, keys);
}
