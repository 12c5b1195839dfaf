import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadSigningKey, type SigningKey, signUnsignedChecked } from '../core/crypto/signing.ts';
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

export interface BatchResult {
  /** Audits in the batch (blank lines are none). */
  audits: number;
  written: number;
  counts: Record<string, number>;
  problems: AuditProblem[];
}

/**
 * The records phase's work on one thread: validates, derives, signs and self-verifies each batch of
 * audits and spills each record into its shard's file in the staging folder, one file a shard for
 * this signer (`tag` in its name: no two threads share a file; see ./shard-records.ts: the index
 * reads them back, and finds a domain audited twice there). A build's worker threads run one each
 * (./worker.ts); a build too small to pay for a thread runs one on its own thread (./dispatch.ts).
 */
export class AuditSigner {
  private readonly init: WorkerInit;
  private readonly key: SigningKey | null;
  private readonly madeDirs = new Set<string>();
  private readonly stagingDir: string;
  private readonly spillDir: string;
  private readonly tag: string;
  /** This signer's spill file of each shard it has written to, open until `flush` (or `close`). */
  private readonly spillFiles = new Map<string, number>();
  /** The batch's records by shard, appended at its end: one write a shard a batch, and nothing held from one batch to the next. */
  private readonly batchLines = new Map<string, string[]>();

  constructor(init: WorkerInit, tag: string | number) {
    this.init = init;
    this.key = init.signingKey ? loadSigningKey(init.signingKey) : null;
    this.stagingDir = resolve(init.stagingDir);
    this.spillDir = `${this.stagingDir}/${SPILL_DIR}`;
    this.tag = String(tag);
    mkdirSync(this.spillDir, { recursive: true });
  }

  /** One batch's audits, each signed and spilled or a problem; `flush` closes the spill files: every batch is done. */
  process(batch: Batch): BatchResult {
    const result: BatchResult = { audits: 0, written: 0, counts: {}, problems: [] };
    if ('flush' in batch) {
      this.close();
      return result;
    }
    if ('values' in batch) {
      for (const item of batch.values) this.processAudit(result, item.value, item.source);
      this.spillBatch();
      return result;
    }
    const { shown } = batch.run;
    forEachLine(batch.run, (text, line) => {
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
      this.processAudit(result, value, source);
    });
    this.spillBatch();
    return result;
  }

  /** Closes the spill files still open (a build that failed holds no file open). */
  close(): void {
    for (const fd of this.spillFiles.values()) closeSync(fd);
    this.spillFiles.clear();
  }

  /** Appends the batch's records to this signer's spill file of each shard. */
  private spillBatch(): void {
    for (const [shard, lines] of this.batchLines) {
      let fd = this.spillFiles.get(shard);
      if (fd === undefined) this.spillFiles.set(shard, (fd = openSync(`${this.spillDir}/${shard}.${this.tag}`, 'a')));
      writeAllSync(fd, lines.join(''));
    }
    this.batchLines.clear();
  }

  private processAudit(result: BatchResult, value: unknown, source: string): void {
    result.audits++;
    const checked = validateAudit(value, source, this.init.context.issuedAt);
    if ('problems' in checked) {
      result.problems.push(...checked.problems);
      return;
    }
    // Once the build has failed nothing is published, but every audit is still validated so
    // that all problems are reported at once; a duplicate is found among the spilled records.
    try {
      const record = deriveRecord(checked.audit, this.init.context);
      // Self-check before publishing: every signature made is verified over the signed bytes
      // (SELF_CHECK_FAILED otherwise, reported like any problem of the audit).
      const bytes = this.key ? signUnsignedChecked(record, this.key).canonical : canonicalRecordText(record);
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
      const lines = this.batchLines.get(shard);
      if (lines) lines.push(spillLine(record.domain, bytes));
      else this.batchLines.set(shard, [spillLine(record.domain, bytes)]);
      if (this.init.tree) this.writeTreeFile(rel, bytes);
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
  private writeTreeFile(rel: string, bytes: string): void {
    const dir = `${this.stagingDir}/${rel.slice(0, 2)}`;
    if (!this.madeDirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.madeDirs.add(dir);
    }
    writeFileSync(`${this.stagingDir}/${rel}`, bytes);
  }
}
