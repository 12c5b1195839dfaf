import { parentPort, workerData } from 'node:worker_threads';
import type { CheckKeys } from '../core/rules/key-trust.ts';
import { checkServeRules, type ServeRuleTask } from './serve-rule-check.ts';

// A mirror's verifying worker (./verify-pool.ts): the serve rule over one pack's records a task.

const keys = workerData as CheckKeys;

parentPort!.on('message', (msg: ServeRuleTask & { id: number }) => {
  try {
    parentPort!.postMessage({ id: msg.id, ...checkServeRules(msg, keys) });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    parentPort!.postMessage({ id: msg.id, fatal: { message: e.message, code: e.code } });
  }
});
