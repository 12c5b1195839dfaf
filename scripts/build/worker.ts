import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { validateAudit } from '../../core/audit.ts';
import { MvrError, type AuditProblem } from '../../core/errors.ts';
import { recordPath } from '../../core/layout.ts';
import { canonicalRecordText, deriveRecord, type IssueContext } from '../../core/record.ts';
import { loadSigningKey, signUnsignedChecked } from '../../core/signing.ts';
import type { AuditItem } from './inputs.ts';
import { jsonErrorLocation } from './json-location.ts';

/** What the build sends to each worker once. */
export interface WorkerInit {
  stagingDir: string;
  /** Private JWK text, or null for an unsigned build. Held in memory only. */
  signingKey: string | null;
  context: IssueContext;
}

export interface BatchResult {
  id: number;
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
function processBatch(id: number, items: AuditItem[]): BatchResult {
  const result: BatchResult = { id, written: 0, counts: {}, problems: [], duplicates: [] };
  for (const item of items) {
    let value: unknown;
    if ('text' in item) {
      try {
        value = JSON.parse(item.text);
      } catch (error) {
        const at = jsonErrorLocation(item.text, error as Error).replace(/^:1:/, ' column ');
        result.problems.push({ source: item.source, message: `invalid JSON${at}: ${(error as Error).message}` });
        continue;
      }
    } else {
      value = item.value;
    }
    const checked = validateAudit(value, item.source);
    if ('problems' in checked) {
      result.problems.push(...checked.problems);
      continue;
    }
    // Once the build has failed nothing is published, but every audit is still validated so
    // that all problems are reported at once; duplicates still need their files to be found.
    try {
      const record = deriveRecord(checked.audit, init.context);
      // Self-check before publishing: every signature made is verified over the signed bytes
      // (SELF_CHECK_FAILED otherwise, reported like any problem of the audit).
      const bytes = key ? signUnsignedChecked(record, key).canonical : canonicalRecordText(record);
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
          result.duplicates.push({ domain: record.domain, source: item.source });
          continue;
        }
        throw error;
      }
      result.written++;
      const bucket = `${record.status}/${record.tier ?? 'none'}`;
      result.counts[bucket] = (result.counts[bucket] ?? 0) + 1;
    } catch (error) {
      if (error instanceof MvrError) {
        result.problems.push({ source: item.source, message: error.message });
        continue;
      }
      throw error;
    }
  }
  return result;
}

parentPort!.on('message', (msg: { id: number; items: AuditItem[] }) => {
  try {
    parentPort!.postMessage(processBatch(msg.id, msg.items));
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    parentPort!.postMessage({ id: msg.id, fatal: { message: e.message, code: e.code } });
  }
});
