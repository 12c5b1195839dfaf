import { hash } from 'node:crypto';
import { indexLine } from '../builder/changes.ts';
import { RecordUnavailableError } from '../core/errors/errors.ts';
import { shardOf } from '../core/layout.ts';
import type { CheckKeys } from '../core/rules/key-trust.ts';
import type { VerificationRecord } from '../core/rules/record.ts';
import { checkParsedServeRule } from '../service/serve-rule.ts';

// The checks of a pack's records that need no order, a record at a time: each record parsed once,
// its place in the map, the serve rule (a signature verification a record), and its line of the
// lookup index. Run here, or in worker threads (./verify-pool.ts, ./verify-worker.ts).

/** A pack's records to check, and their map leaves. */
export interface ServeRuleTask {
  /** The pack's bytes (in shared memory when a worker checks them: never copied). */
  pack: Uint8Array;
  /** Where each record ends in the pack, past its newline (the pack index's ends, from 0 at the pack's start). */
  ends: Uint32Array;
  /** The map leaves of the pack's records, `leafSize` bytes each, in order: a copy of their own, moved to a worker, not copied. */
  leaves: Uint8Array;
  leafSize: number;
  /** Whether a leaf is the map entry the serve rule compares a record with (v2), or only its domain's hash (v1). */
  entries: boolean;
}

/** The first record that fails (its position in the task and which check), else each record's domain and lookup index line, in order. */
export interface ServeRuleAnswer {
  bad: { at: number; domain: string | null; check: 'record' | 'place' | 'serve_rule'; message: string } | null;
  domains: string[];
  lines: string[];
}

/**
 * Checks a task's records in turn: each one is a JSON object naming a domain, whose SHA-256 begins
 * its leaf (the records are the map's, in its order); then the serve rule over it (JSON, the record
 * of that domain, its shape, a signature by a trusted key, in a v2 build the leaf's entry). A record
 * not a record or out of place is named before any that fails the serve rule, wherever it is in the
 * pack, as when the places were checked first in a pass of their own.
 */
export function checkServeRules(task: ServeRuleTask, keys: CheckKeys): ServeRuleAnswer {
  const pack = Buffer.from(task.pack.buffer, task.pack.byteOffset, task.pack.byteLength);
  const domains: string[] = [];
  const lines: string[] = [];
  let failed: ServeRuleAnswer['bad'] = null;
  let start = 0;
  for (const [at, end] of task.ends.entries()) {
    const bytes = pack.subarray(start, end - 1);
    start = end;
    const value = parsed(bytes);
    const domain = (value as { domain?: unknown } | null)?.domain;
    if (typeof domain !== 'string')
      return { bad: { at, domain: null, check: 'record', message: 'not JSON, or no domain' }, domains, lines };
    const leaf = task.leaves.subarray(at * task.leafSize, (at + 1) * task.leafSize);
    const domainHash = hash('sha256', domain, 'buffer');
    if (!domainHash.equals(leaf.subarray(0, 32))) return { bad: { at, domain, check: 'place', message: 'out of place' }, domains, lines };
    domains.push(domain);
    if (failed) continue;
    try {
      checkParsedServeRule(domain, bytes, value, keys, task.entries ? leaf : null);
    } catch (error) {
      if (!(error instanceof RecordUnavailableError)) throw error;
      failed = { at, domain, check: 'serve_rule', message: error.message };
      continue;
    }
    lines.push(indexLine(shardOf(domainHash), value as VerificationRecord));
  }
  return { bad: failed, domains, lines };
}

/** What a record's bytes parse to as JSON, or undefined when they are not JSON. */
function parsed(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Runs the checks of a task: here, or in a pool of workers. */
export type ServeRuleCheck = (task: ServeRuleTask) => Promise<ServeRuleAnswer>;

/** The checks run in this thread. */
export function serveRuleHere(keys: CheckKeys): ServeRuleCheck {
  return async (task) => checkServeRules(task, keys);
}
