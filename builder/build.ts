import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { canonicalJson } from '@merchant-verify/verifier/issuer';
import { normalizeDomain } from '../core/domain.ts';
import { BuildError, ConfigError, InvalidAuditsError, MvrError, type AuditProblem } from '../core/errors.ts';
import { KEY_SET_PATH, type KeySet } from '@merchant-verify/verifier';
import { BUILDS_DIR, MANIFEST_FILE } from '../core/layout.ts';
import { manifestText, type Manifest } from '../core/manifest-schema.ts';
import { formatTimestamp } from '@merchant-verify/verifier/issuer';
import { writeAtomic } from '../core/files.ts';
import { copyVerifyPage } from '../core/verify-page.ts';
import { loadActiveKey, publishedKeySet } from '../keyring/signing-keys.ts';
import { MAX_PROBLEMS_KEPT, processAll, sortProblems } from './dispatch.ts';
import { listAuditFiles, readAuditFile } from './inputs.ts';
import { acquireBuildLock, createStaging, discardStaging, liveBuildId, pruneBuilds, swapInBuild } from './publish.ts';
import type { WorkerInit } from './worker.ts';
import { DEFAULT_KEEP, type BuildOptions, type BuildPhase, type BuildSummary } from './options.ts';
import { writeChanges, writeIndex } from './changes.ts';
import { MapLeaves, writeDomainMap } from './domain-map.ts';
import { withKeptKeys } from './kept.ts';
import { keptEntry, readKept, writeKept } from '../storage/kept-builds.ts';
import { loadLogKey, logOrigin } from '../keyring/log-key.ts';
import { LOG_CHECKPOINT, LOG_DIR, LOG_VKEY_PATH } from '../core/layout.ts';
import { appendBuildToLog, openPublishedLog, type LogStep } from './log.ts';
import { BuildDigest, existingBuild } from './build-id.ts';

export type { BuildOptions, BuildPhase, BuildProgress, BuildSummary } from './options.ts';

/**
 * The monthly build: audits in, one canonical signed record per domain and the key set out.
 * All or nothing: records are written to a staging folder and swapped in only when every audit
 * was valid and every signature verified; on any problem the live build is left as it was.
 */
export async function runBuild(opts: BuildOptions): Promise<BuildSummary> {
  const started = performance.now();
  let release: () => Promise<void> = async () => undefined;
  let staging: string | null = null;
  let logStep: LogStep | null = null;
  let swapped = false;
  // Each phase is announced as it starts; until the swap, an abort (Ctrl-C) stops the build there.
  const phase = (name: BuildPhase) => {
    if (!swapped) opts.signal?.throwIfAborted();
    opts.onPhase?.(name);
  };
  try {
    release = await acquireBuildLock(opts.recordsDir);
    const key = await loadActiveKey(opts.keysDir, opts.signingKey);
    if (!key) opts.onWarning?.('no signing key configured (run "mvr keygen" or set MVR_SIGNING_KEY): records are UNSIGNED and the key set is empty');
    const logKey = await loadLogKey(opts.keysDir, opts.logKey);
    const origin = logOrigin(opts.issuer);
    if (logKey && logKey.name !== origin) throw new ConfigError(`the log key is named "${logKey.name}", but the log of issuer ${opts.issuer} is "${origin}" (a log key is made for one issuer: "mvr keygen --log --issuer ${opts.issuer}")`);
    // A log the build would refuse is refused now, before any audit is read (a month's work).
    const publishedLog = logKey ? await openPublishedLog(opts.publicDir, logKey, origin) : null;
    const keep = opts.keep ?? DEFAULT_KEEP;
    const keptBefore = await readKept(opts.recordsDir);
    const earlier = keptBefore.slice(0, keep - 1);
    const keySetFile = join(opts.publicDir, KEY_SET_PATH);
    const ownKeys: KeySet = key ? await publishedKeySet(opts.keysDir, key, opts.publishKeysFile) : { keys: [] };
    // Unsigned builds publish no key set; signed ones keep listing the keys of the kept builds.
    const keySet = key ? await withKeptKeys(ownKeys, earlier, keySetFile, (m) => opts.onWarning?.(m)) : ownKeys;
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
    phase('records');
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
    // The change feed, against every build kept before this one (part of the build: all or nothing).
    phase('index');
    const leaves = new MapLeaves(outcome.written);
    const digest = new BuildDigest({ issuer: opts.issuer, schemaUrl: opts.schemaUrl, keyId: key?.kid ?? null });
    const runs = await writeIndex(staging, leaves.add, digest.add);
    // Readable by date, the rest from the content: the same build made twice is one build.
    const buildId = digest.id(issuedAt);
    const summary = (rest: Pick<BuildSummary, 'durationMs' | 'keptBuilds' | 'prunedBuilds' | 'changes' | 'domainMap' | 'log'> & { buildDir: string | null }): BuildSummary => ({
      buildId,
      unchanged: rest.buildDir === null,
      records: outcome.written,
      byStatus: sortKeys(byStatus),
      byTier: sortKeys(byTier),
      signed: key !== null,
      keyId: key?.kid ?? null,
      publishedKeyIds: keySet.keys.map((k) => k.kid),
      issuedAt,
      files: files.length,
      workers: workerCount,
      recordsPerSecond: outcome.written / (rest.durationMs / 1000),
      keySetFile,
      ...rest,
      buildDir: rest.buildDir ?? join(opts.recordsDir, BUILDS_DIR, buildId),
      peakRssMb: peakRssMb(),
    });
    // The same build again: it is live already, so no build is written, appended to the log or kept
    // twice; only what the options decide besides the build (the key set, how many builds are kept) is.
    if ((await existingBuild(opts.recordsDir, buildId)) === 'live') {
      await writeKeySet(opts, keySetFile, keySet);
      const kept = keptBefore.slice(0, keep);
      await writeKept(opts.recordsDir, kept);
      const pruned = await pruneBuilds(opts.recordsDir, [...kept.map((b) => b.id), keptBefore[1]?.id ?? null]);
      const durationMs = performance.now() - started;
      return summary({ durationMs, buildDir: null, keptBuilds: kept.length, prunedBuilds: pruned.length, changes: 0, domainMap: { durationMs: 0, domains: outcome.written, bytes: outcome.written * 32 }, log: null });
    }
    // The domain map and the signed statement over it: what "never audited" is decided by.
    phase('map');
    const mapStarted = performance.now();
    const { map } = await writeDomainMap(staging, leaves.leaves(), { issuer: opts.issuer, build: buildId, issuedAt, key });
    const domainMap = { durationMs: leaves.spentMs + performance.now() - mapStarted, domains: map.size, bytes: map.size * 32 };
    let changes = 0;
    if (earlier.length > 0) phase('changes');
    for (const b of earlier) changes += await writeChanges(staging, b.id, join(opts.recordsDir, BUILDS_DIR, b.id));
    // The transparency log: every record appended, new tiles written, the checkpoint signed (published once live).
    if (logKey && publishedLog) {
      phase('log');
      logStep = await appendBuildToLog({ log: publishedLog, buildDir: staging, runs, key: logKey, origin, issuedAt, signal: opts.signal });
      await mkdir(dirname(join(opts.publicDir, LOG_VKEY_PATH)), { recursive: true });
      await writeAtomic(join(opts.publicDir, LOG_VKEY_PATH), `${logKey.vkey}\n`);
    } else {
      const logged = await stat(join(opts.publicDir, LOG_DIR, LOG_CHECKPOINT)).catch(() => null);
      opts.onWarning?.(logged ? `no log key (keys/log.key or MVR_LOG_KEY): this build's records are NOT appended to the log in ${join(opts.publicDir, LOG_DIR)}` : 'no log key configured (run "mvr keygen --log" or set MVR_LOG_KEY): records are not appended to a transparency log');
    }

    phase('key_set');
    const manifest: Manifest = {
      issuer: opts.issuer,
      issued_at: issuedAt,
      schema: opts.schemaUrl,
      records: outcome.written,
      by_status: sortKeys(byStatus),
      by_tier: sortKeys(byTier),
      key_id: key?.kid ?? null,
      key_ids_published: keySet.keys.map((k) => k.kid),
      // Where this build's records are in the log: entries [from, to) of the log named origin.
      log: logStep ? { origin, from: logStep.summary.from, to: logStep.summary.to } : null,
    };
    await writeFile(join(staging, MANIFEST_FILE), manifestText(manifest));

    // Key set first, then records: a record is never live before the key that verifies it.
    await writeKeySet(opts, keySetFile, keySet);
    phase('swap');
    const { buildDir, previous } = await swapInBuild(opts.recordsDir, staging, buildId);
    staging = null;
    swapped = true;
    // The build is live from here: its checkpoint's tiles must stay even if publishing the
    // checkpoint fails (the next build then extends the log from the last published checkpoint).
    const live = logStep;
    logStep = null;
    await live?.publish().catch((error: Error) => {
      throw new BuildError(`build ${buildId} is live, but the log's checkpoint could not be published: ${error.message}; build again to publish one`, { cause: error });
    });
    const logSummary = live?.summary ?? null;
    const durationMs = performance.now() - started;
    // Old builds go after the swap and outside the measured time: removing a million files
    // takes about as long as writing them, and no reader needs them any more.
    phase('prune');
    const kept = [await keptEntry(opts.recordsDir, buildId), ...earlier];
    await writeKept(opts.recordsDir, kept);
    const pruned = await pruneBuilds(opts.recordsDir, [...kept.map((b) => b.id), previous]);
    return summary({ durationMs, buildDir, keptBuilds: kept.length, prunedBuilds: pruned.length, changes, domainMap, log: logSummary });
  } catch (error) {
    if (opts.signal?.aborted && !swapped) {
      const live = await liveBuildId(opts.recordsDir);
      // INTERRUPTED (exit 130): a signal, not a failure of the build itself.
      throw new MvrError('INTERRUPTED', `the build was interrupted (${String(opts.signal.reason)}) before it went live: nothing was published and its staging folder is removed; ${live ? `build ${live} stays live` : 'no build was live before it, and none is now'}`);
    }
    // File-system failures (disk full, permissions, file too large) become one clear, coded
    // error; the live build was never touched.
    if (!(error instanceof MvrError) && typeof (error as NodeJS.ErrnoException)?.code === 'string') {
      throw new BuildError(`cannot write the build: ${(error as Error).message}; the previous build is still live`, { cause: error });
    }
    throw error;
  } finally {
    if (staging) await discardStaging(staging).catch(() => undefined);
    // A build that failed before going live leaves the log as it was.
    if (logStep) await logStep.discard().catch(() => undefined);
    await release();
  }
}

/** The key set, and the verify page beside it, so a CDN serving public/ serves the page too. */
async function writeKeySet(opts: BuildOptions, keySetFile: string, keySet: KeySet): Promise<void> {
  await mkdir(dirname(keySetFile), { recursive: true });
  await writeAtomic(keySetFile, `${canonicalJson(keySet)}\n`);
  if (!(await copyVerifyPage(opts.publicDir))) opts.onWarning?.('the verify page is not built (run "npm run build"): public/verify/ was not written');
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

function sortKeys(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}
