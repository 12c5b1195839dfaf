import { workerData } from 'node:worker_threads';
import { answerTasks } from '../builder/worker-pool.ts';
import type { CheckKeys } from '../core/rules/key-trust.ts';
import { checkServeRules, type ServeRuleTask } from './serve-rule-check.ts';

// A mirror's verifying worker (./verify-pool.ts): the serve rule over one pack's records a task.

const keys = workerData as CheckKeys;

answerTasks((task: ServeRuleTask) => checkServeRules(task, keys));
