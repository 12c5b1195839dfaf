import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { canonicalJson } from '../../core/canonical.ts';
import { normalizeDomain } from '../../core/domain.ts';
import { BuildError, InvalidAuditsError, MvrError, type AuditProblem } from '../../core/errors.ts';
import { KEY_SET_PATH, type KeySet } from '../../core/keyset.ts';
import { MANIFEST_FILE } from '../../core/layout.ts';
import { formatTimestamp } from '../../core/time.ts';
import { loadActiveKey, publishedKeySet, writeAtomic } from '../keystore.ts';
import { listAuditFiles, readAuditFile, readJsonFile, readLineRuns } from './inputs.ts';
import type { LineRun } from './lines.ts';
import { acquireBuildLock, createStaging, discardStaging, pruneBuilds, swapInBuild } from './publish.ts';
import type { BatchMessage, BatchResult, WorkerInit } from './worker.ts';
import { buildWorkerScript } from './worker-script.ts';

export interface BuildOptions {
  auditsDir: string;
  recordsDir: string;
  publicDir: string;
  keysDir: string;
  issuer: string;
  schemaUrl: string;
  /** `issued_at` of every record, epoch ms (from `--now`, `SOURCE_DATE_EPOCH`, or the clock). */
  now: number;
  /** `MVR_SIGNING_KEY`: a private JWK that overrides keys/active. */
  signingKey?: string | undefined;
  /** A JWK Set file whose public keys stay listed (CI keeps earlier keys published this way). */
  publishKeysFile?: string | undefined;
  workers?: number | undefined;
  batchSize?: number | undefined;
  /** Publish even when there is no audit at all (normally refused: it would withdraw every record). */
  allowEmpty?: boolean | undefined;
  onProgress?: ((p: BuildProgress) => void) | undefined;
  onWarning?: ((message: string) => void) | undefined;
}

export interface BuildProgress {
  records: number;
  bytesRead: number;
  totalBytes: number;
  elapsedMs: number;
}

export interface BuildSummary {
  buildId: string;
  records: number;
  byStatus: Record<string, number>;
  byTier: Record<string, number>;
  signed: boolean;
  keyId: string | null;
  publishedKeyIds: string[];
  issuedAt: string;
  files: number;
  workers: number;
  durationMs: number;
  recordsPerSecond: number;
  buildDir: string;
  keySetFile: string;
  prunedBuilds: number;
  /** Peak resident memory of the build process, workers included (MB). */
  peakRssMb: number;
}

const MAX_PROBLEMS_KEPT = 1000;

/**
 * The monthly build: audits in, one canonical signed record per domain and the key set out.
 * All or nothing: records are written to a staging folder and swapped in only when every audit
 * was valid and every signature verified; on any problem the live build is left as it was.
 */
export async function runBuild(opts: BuildOptions): Promise<BuildSummary> {
  const started = performance.now();
  let release: () => Promise<void> = async () => undefined;
  let staging: string | null = null;
  try {
    release = await acquireBuildLock(opts.recordsDir);
    const key = await loadActiveKey(opts.keysDir, opts.signingKey);
    if (!key) opts.onWarning?.('no signing key configured (run "mvr keygen" or set MVR_SIGNING_KEY): records are UNSIGNED and the key set is empty');
    const keySet: KeySet = key ? await publishedKeySet(opts.keysDir, key, opts.publishKeysFile) : { keys: [] };
    // A missing folder is a mistake (a typo in --audits), never "no audits this month".
    const dirStat = await stat(opts.auditsDir).catch(() => null);
    if (!dirStat?.isDirectory()) throw new BuildError(`audits folder ${opts.auditsDir} does not exist or is not a folder`);
    const files = await listAuditFiles(opts.auditsDir);
    staging = await createStaging(opts.recordsDir);
    const issuedAt = formatTimestamp(opts.now);
    const init: WorkerInit = {
      stagingDir: staging,
      signingKey: key ? JSON.stringify({ kty: 'OKP', crv: 'Ed25519', ...key.privateKey.export({ format: 'jwk' }) }) : null,
      context: { issuer: opts.issuer, schemaUrl: opts.schemaUrl, issuedAt },
    };
    // One more worker than cores: each worker spends about a fifth of its time creating files,
    // in the kernel, and the extra worker keeps a core busy meanwhile (measured on 2 cores,
    // 1M audits: 5,292 -> 5,965 records/s; peak RSS 218 -> 256 MB).
    const workerCount = Math.max(1, opts.workers ?? availableParallelism() + 1);
    const outcome = await processAll(files, init, workerCount, opts, started);

    const duplicates = outcome.duplicates.size > 0 ? await duplicateProblems(files, outcome.duplicates) : [];
    if (outcome.problemCount + duplicates.length > 0) {
      const problems = sortProblems([...duplicates, ...outcome.problems]).slice(0, MAX_PROBLEMS_KEPT);
      throw new InvalidAuditsError(problems, outcome.problemCount + duplicates.length);
    }
    if (outcome.audits === 0 && !opts.allowEmpty) {
      throw new BuildError(`no audits in ${files.length} file${files.length === 1 ? '' : 's'} under ${opts.auditsDir}; refusing to publish an empty build, which would withdraw every record (use --allow-empty)`);
    }

    const byStatus: Record<string, number> = {}, byTier: Record<string, number> = {};
    for (const [bucket, n] of Object.entries(outcome.counts)) {
      const [status, tier] = bucket.split('/') as [string, string];
      byStatus[status] = (byStatus[status] ?? 0) + n;
      byTier[tier] = (byTier[tier] ?? 0) + n;
    }
    const buildId = `${issuedAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${process.pid}-${Date.now().toString(36)}`;
    const manifest = {
      issuer: opts.issuer,
      issued_at: issuedAt,
      schema: opts.schemaUrl,
      records: outcome.written,
      by_status: sortKeys(byStatus),
      by_tier: sortKeys(byTier),
      key_id: key?.kid ?? null,
      key_ids_published: keySet.keys.map((k) => k.kid),
    };
    await writeFile(join(staging, MANIFEST_FILE), `${canonicalJson(manifest)}\n`);

    // Key set first, then records: a record is never live before the key that verifies it.
    const keySetFile = join(opts.publicDir, KEY_SET_PATH);
    await mkdir(dirname(keySetFile), { recursive: true });
    await writeAtomic(keySetFile, `${canonicalJson(keySet)}\n`);
    const { buildDir, previous } = await swapInBuild(opts.recordsDir, staging, buildId);
    staging = null;
    const durationMs = performance.now() - started;
    // Old builds go after the swap and outside the measured time: removing a million files
    // takes about as long as writing them, and no reader needs them any more.
    const pruned = await pruneBuilds(opts.recordsDir, [buildId, previous]);
    return {
      buildId,
      records: outcome.written,
      byStatus: sortKeys(byStatus),
      byTier: sortKeys(byTier),
      signed: key !== null,
      keyId: key?.kid ?? null,
      publishedKeyIds: keySet.keys.map((k) => k.kid),
      issuedAt,
      files: files.length,
      workers: workerCount,
      durationMs,
      recordsPerSecond: outcome.written / (durationMs / 1000),
      buildDir,
      keySetFile,
      prunedBuilds: pruned.length,
      peakRssMb: peakRssMb(),
    };
  } catch (error) {
    // File-system failures (disk full, permissions, file too large) become one clear, coded
    // error; the live build was never touched.
    if (!(error instanceof MvrError) && typeof (error as NodeJS.ErrnoException)?.code === 'string') {
      throw new BuildError(`cannot write the build: ${(error as Error).message}; the previous build is still live`, { cause: error });
    }
    throw error;
  } finally {
    if (staging) await discardStaging(staging).catch(() => undefined);
    await release();
  }
}

/**
 * The process's own peak resident memory, workers included (MB). On Linux this is VmHWM, the
 * high-water mark of this program's memory. getrusage's maxRSS is not: it keeps the parent's
 * resident size from the fork before exec, so a build started by a large parent (a benchmark
 * holding a big folder listing) reported that parent's size instead of its own.
 */
function peakRssMb(): number {
  try {
    const kb = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kb) return Math.round(Number(kb) / 1024);
  } catch {
    // not Linux
  }
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

interface Outcome {
  /** Audits read (valid or not). */
  audits: number;
  written: number;
  counts: Record<string, number>;
  problems: AuditProblem[];
  problemCount: number;
  duplicates: Set<string>;
}

/**
 * Streams every file through a pool of workers, at most two batches in flight per worker. A
 * JSONL file goes as runs of whole lines, bytes handed over without a copy; the workers decode,
 * number and parse the lines, so the main thread does no work per audit.
 */
async function processAll(
  files: { path: string; size: number }[],
  init: WorkerInit,
  workerCount: number,
  opts: BuildOptions,
  started: number,
): Promise<Outcome> {
  const batchSize = opts.batchSize ?? 500;
  const totalBytes = files.reduce((n, f) => n + f.size, 0);
  const outcome: Outcome = {
    audits: 0,
    written: 0,
    counts: {},
    problems: [],
    problemCount: 0,
    duplicates: new Set(),
  };
  let bytesRead = 0, lastProgress = 0;
  // Keep the first problems in input order, not in the order workers finish: trim by sorting
  // now and then, so memory stays bounded however many audits are bad.
  const addProblem = (p: AuditProblem) => {
    outcome.problemCount++;
    outcome.problems.push(p);
    if (outcome.problems.length >= 2 * MAX_PROBLEMS_KEPT) outcome.problems = sortProblems(outcome.problems).slice(0, MAX_PROBLEMS_KEPT);
  };
  const progress = (force = false) => {
    const now = performance.now();
    if (!opts.onProgress || (!force && now - lastProgress < 250)) return;
    lastProgress = now;
    opts.onProgress({ records: outcome.written, bytesRead, totalBytes, elapsedMs: now - started });
  };

  const script = await buildWorkerScript();
  // Bounded heaps keep the build's memory flat however many audits pass through.
  const resourceLimits = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 16 };
  const workers = Array.from({ length: workerCount }, () => new Worker(script, { workerData: init, resourceLimits }));
  const pending = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  let failure: Error | null = null;
  for (const w of workers) {
    w.on('message', (msg: BatchResult | { id: number; fatal: { message: string; code?: string } }) => {
      const entry = pending.get(msg.id);
      pending.delete(msg.id);
      if ('fatal' in msg) {
        failure ??= new BuildError(`writing records failed: ${msg.fatal.message}; the previous build is still live`);
        entry?.reject(failure);
        return;
      }
      outcome.audits += msg.audits;
      outcome.written += msg.written;
      for (const [k, n] of Object.entries(msg.counts)) outcome.counts[k] = (outcome.counts[k] ?? 0) + n;
      for (const p of msg.problems) addProblem(p);
      for (const d of msg.duplicates) outcome.duplicates.add(d.domain);
      progress();
      entry?.resolve();
    });
    w.on('error', (error) => {
      failure ??= new BuildError(`build worker failed: ${error.message}`, { cause: error });
      for (const p of pending.values()) p.reject(failure);
      pending.clear();
    });
  }

  let nextId = 0, turn = 0;
  const inFlight = new Set<Promise<void>>();
  const submit = async (batch: { run: LineRun } | { values: { source: string; value: unknown }[] }) => {
    if (failure) throw failure;
    const id = nextId++;
    const p = new Promise<void>((resolve, reject) => pending.set(id, { resolve, reject }));
    const tracked = p.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    const worker = workers[turn++ % workers.length]!;
    if ('run' in batch) worker.postMessage({ id, run: batch.run } satisfies BatchMessage, [batch.run.bytes.buffer]);
    else worker.postMessage({ id, values: batch.values } satisfies BatchMessage);
    while (inFlight.size >= workers.length * 2) await Promise.race(inFlight);
  };

  try {
    const onBytes = (n: number) => (bytesRead += n);
    for (const file of files) {
      if (file.path.endsWith('.jsonl')) {
        for await (const run of readLineRuns(file.path, batchSize, onBytes)) await submit({ run });
        continue;
      }
      let values: { source: string; value: unknown }[] = [];
      for await (const item of readJsonFile(file.path, addProblem, onBytes)) {
        values.push(item);
        if (values.length >= batchSize) {
          await submit({ values });
          values = [];
        }
      }
      if (values.length > 0) await submit({ values });
    }
    await Promise.all(inFlight);
    if (failure) throw failure;
    progress(true);
    return outcome;
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/**
 * A second, cheap pass that runs only when a duplicate was seen: it names every source of each
 * duplicated domain (the first pass keeps no per-domain memory, so that 1M domains stay flat).
 */
async function duplicateProblems(files: { path: string }[], domains: Set<string>): Promise<AuditProblem[]> {
  const sources = new Map<string, string[]>();
  for (const file of files) {
    for await (const item of readAuditFile(file.path, () => undefined, () => undefined)) {
      let value: unknown;
      try {
        value = 'text' in item ? JSON.parse(item.text) : item.value;
      } catch {
        continue;
      }
      const raw = (value as { domain?: unknown } | null)?.domain;
      let domain: string;
      try {
        domain = normalizeDomain(raw);
      } catch {
        continue;
      }
      if (domains.has(domain)) sources.set(domain, [...(sources.get(domain) ?? []), item.source]);
    }
  }
  return [...sources.entries()].map(([domain, list]) => ({
    source: list[0]!,
    member: 'domain',
    message: `duplicate domain "${domain}" (after normalization), also in ${list.slice(1).join(', ')}`,
  }));
}

/** Input order: file, then line or index numerically (workers finish batches in any order). */
function sortProblems(problems: AuditProblem[]): AuditProblem[] {
  return problems.sort((a, b) => a.source.localeCompare(b.source, 'en', { numeric: true }));
}

function sortKeys(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}
