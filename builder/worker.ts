import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { threadId, workerData } from 'node:worker_threads';
import { loadSigningKey, signUnsignedChecked } from '../core/crypto/signing.ts';
import { type AuditProblem, MvrError } from '../core/errors/errors.ts';
import { MAX_RECORD_BYTES, writeAllSync } from '../core/files.ts';
import { recordPath } from '../core/layout.ts';
import { validateAudit } from '../core/rules/audit.ts';
import { deriveRecord, type IssueContext } from '../core/rules/record.ts';
import { canonicalRecordText } from '../core/rules/record-text.ts';
// Types only: the file listing (fast-glob) stays out of the workers' bundle.
import type { AuditValue } from './inputs.ts';
import { jsonErrorLocation } from './json-location.ts';
import { forEachLine, type LineRun } from './lines.ts';
import { SPILL_DIR, spillLine } from './shard-records.ts';
import { answerTasks } from './worker-pool.ts';

/** What the build sends to each worker once. */
export interface WorkerInit {
  stagingDir: string;
  /** Private JWK text, or null for an unsigned build. Held in memory only. */
  signingKey: string | null;
  context: IssueContext;
  /** Also write one file a record (`<ab>/<domain>.json`), for people to read; nothing in the service reads it. */
  tree: boolean;
}

/**
 * One batch: a run of JSONL lines as bytes (numbered, decoded and parsed here), or audits of
 * `.json` files already parsed by the main thread.
 */
export type Batch = { run: LineRun } | { values: AuditValue[] } | { flush: true };
export type BatchMessage = Batch & { id: number };

export interface BatchResult {
  id: number;
  /** Audits in the batch (blank lines are none). */
  audits: number;
  written: number;
  counts: Record<string, number>;
  problems: AuditProblem[];
}

const init = workerData as WorkerInit;
const key = init.signingKey ? loadSigningKey(init.signingKey) : null;
const madeDirs = new Set<string>();
const stagingDir = resolve(init.stagingDir);
const spillDir = `${stagingDir}/${SPILL_DIR}`;
mkdirSync(spillDir, { recursive: true });

/** This worker's spill file of each shard it has written to, open until the pool's `flush`. */
const spillFiles = new Map<string, number>();
/** The batch's records by shard, appended at its end: one write a shard a batch, and nothing held from one batch to the next. */
const batchLines = new Map<string, string[]>();

/** Appends the batch's records to this worker's spill file of each shard (one per worker: no two threads share a file). */
function spillBatch(): void {
  for (const [shard, lines] of batchLines) {
    let fd = spillFiles.get(shard);
    if (fd === undefined) spillFiles.set(shard, (fd = openSync(`${spillDir}/${shard}.${threadId}`, 'a')));
    writeAllSync(fd, lines.join(''));
  }
  batchLines.clear();
}

/**
 * Validates, derives, signs and self-verifies one batch of audits, and appends each record to its
 * shard's spill file in the staging folder (see ./shard-records.ts: the index reads them back, and
 * finds a domain audited twice there). `flush` closes the spill files: every batch is done.
 */
function processBatch(msg: BatchMessage): BatchResult {
  const result: BatchResult = { id: msg.id, audits: 0, written: 0, counts: {}, problems: [] };
  if ('flush' in msg) {
    for (const fd of spillFiles.values()) closeSync(fd);
    spillFiles.clear();
    return result;
  }
  if ('values' in msg) {
    for (const item of msg.values) processAudit(result, item.value, item.source);
    spillBatch();
    return result;
  }
  const { shown } = msg.run;
  forEachLine(msg.run, (text, line) => {
    const source = `${shown}:${line}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      result.audits++;
      const at = jsonErrorLocation(text, error as Error).replace(/^:1:/, ' column ');
      result.problems.push({ source, kind: 'schema', message: `invalid JSON${at}: ${(error as Error).message}` });
      return;
    }
    processAudit(result, value, source);
  });
  spillBatch();
  return result;
}

function processAudit(result: BatchResult, value: unknown, source: string): void {
  result.audits++;
  const checked = validateAudit(value, source, init.context.issuedAt);
  if ('problems' in checked) {
    result.problems.push(...checked.problems);
    return;
  }
  // Once the build has failed nothing is published, but every audit is still validated so
  // that all problems are reported at once; a duplicate is found among the spilled records.
  try {
    const record = deriveRecord(checked.audit, init.context);
    // Self-check before publishing: every signature made is verified over the signed bytes
    // (SELF_CHECK_FAILED otherwise, reported like any problem of the audit).
    const bytes = key ? signUnsignedChecked(record, key).canonical : canonicalRecordText(record);
    // A record no store or reader accepts is never signed into a build: it would answer 503 forever.
    const size = Buffer.byteLength(bytes);
    if (size > MAX_RECORD_BYTES) {
      result.problems.push({
        source,
        kind: 'record_too_large',
        message: `its record would be ${size} bytes, more than the ${MAX_RECORD_BYTES} bytes a record may have (evidence.blockers, flags or engines too long?)`,
      });
      return;
    }
    // recordPath gives `shard/name` of a normalized domain: joined as text, no path parsing per record.
    const rel = recordPath(record.domain);
    const shard = rel.slice(0, 2);
    const lines = batchLines.get(shard);
    if (lines) lines.push(spillLine(record.domain, bytes));
    else batchLines.set(shard, [spillLine(record.domain, bytes)]);
    if (init.tree) writeTreeFile(rel, bytes);
    result.written++;
    const bucket = `${record.status}/${record.tier ?? 'none'}`;
    result.counts[bucket] = (result.counts[bucket] ?? 0) + 1;
  } catch (error) {
    if (error instanceof MvrError) {
      result.problems.push({ source, kind: 'record', message: error.message });
      return;
    }
    throw error;
  }
}

/** The record's file in the tree kept for people; a second audit of its domain overwrites it, and the index refuses the build. */
function writeTreeFile(rel: string, bytes: string): void {
  const dir = `${stagingDir}/${rel.slice(0, 2)}`;
  if (!madeDirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    madeDirs.add(dir);
  }
  writeFileSync(`${stagingDir}/${rel}`, bytes);
}

answerTasks((batch: BatchMessage) => processBatch(batch));
