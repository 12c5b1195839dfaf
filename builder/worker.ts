import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { loadSigningKey, signUnsignedChecked } from '../core/crypto/signing.ts';
import { type AuditProblem, MvrError } from '../core/errors/errors.ts';
import { MAX_RECORD_BYTES } from '../core/files.ts';
import { recordPath } from '../core/layout.ts';
import { validateAudit } from '../core/rules/audit.ts';
import { deriveRecord, type IssueContext } from '../core/rules/record.ts';
import { canonicalRecordText } from '../core/rules/record-text.ts';
// Types only: the file listing (fast-glob) stays out of the workers' bundle.
import type { AuditValue } from './inputs.ts';
import { jsonErrorLocation } from './json-location.ts';
import { forEachLine, type LineRun } from './lines.ts';

/** What the build sends to each worker once. */
export interface WorkerInit {
  stagingDir: string;
  /** Private JWK text, or null for an unsigned build. Held in memory only. */
  signingKey: string | null;
  context: IssueContext;
}

/**
 * One batch: a run of JSONL lines as bytes (numbered, decoded and parsed here), or audits of
 * `.json` files already parsed by the main thread.
 */
export type Batch = { run: LineRun } | { values: AuditValue[] };
export type BatchMessage = Batch & { id: number };

export interface BatchResult {
  id: number;
  /** Audits in the batch (blank lines are none). */
  audits: number;
  written: number;
  counts: Record<string, number>;
  problems: AuditProblem[];
  duplicates: { domain: string; source: string }[];
}

const init = workerData as WorkerInit;
const key = init.signingKey ? loadSigningKey(init.signingKey) : null;
const madeDirs = new Set<string>();
const stagingDir = resolve(init.stagingDir);

/**
 * Validates, derives, signs, self-verifies and writes one batch of audits into the staging
 * folder. A domain's file is created with O_EXCL, so the file system itself detects a second
 * audit of the same domain, across workers, without a million-entry set in memory.
 */
function processBatch(msg: BatchMessage): BatchResult {
  const result: BatchResult = { id: msg.id, audits: 0, written: 0, counts: {}, problems: [], duplicates: [] };
  if ('values' in msg) {
    for (const item of msg.values) processAudit(result, item.value, item.source);
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
  // that all problems are reported at once; duplicates still need their files to be found.
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
    const path = `${stagingDir}/${recordPath(record.domain)}`;
    const dir = path.slice(0, path.lastIndexOf('/'));
    if (!madeDirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      madeDirs.add(dir);
    }
    try {
      writeFileSync(path, bytes, { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        result.duplicates.push({ domain: record.domain, source });
        return;
      }
      throw error;
    }
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

parentPort!.on('message', (msg: BatchMessage) => {
  try {
    parentPort!.postMessage(processBatch(msg));
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    parentPort!.postMessage({ id: msg.id, fatal: { message: e.message, code: e.code } });
  }
});
