import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeySet, TlogPolicy } from '@merchant-verify/verifier';
import { formatVerifierKey, parseCheckpoint, parseNote } from '#shared';
import { writeCompactAnswers } from '../builder/compact-answers.ts';
import { acquireBuildLock, createStaging, discardStaging, liveBuildId, pruneBuilds, removeTree, swapInBuild } from '../builder/swap.ts';
import { ConfigError, LogInconsistentError, MirrorRefusedError, MvrError } from '../core/errors/errors.ts';
import { BUILD_CHECKPOINT_FILE, BUILD_SERVED_CHECKPOINT_FILE, BUILDS_DIR, MANIFEST_FILE, MIRROR_FILE } from '../core/layout.ts';
import { parseManifest } from '../core/schemas/manifest.ts';
import type { TileFetch } from '../core/tlog/tile-tree.ts';
import { servedCheckpointOf } from '../service/served-checkpoint.ts';
import { keptEntry, writeKept } from '../storage/kept-builds.ts';
import { finishBuildFolder, markMirror, writeBuildFiles, writeLogTiles } from './build-folder.ts';
import {
  type BoundedReader,
  type CheckedPack,
  type CheckedStatement,
  checkLogged,
  checkManifest,
  checkMap,
  checkPack,
  checkStatement,
} from './checks.ts';
import { LookupIndex } from './lookup-index.ts';
import { PackPool } from './pack-pool.ts';
import { type LogRange, RecordLogCheck } from './record-log.ts';
import { livePosition, rollbackRefusal } from './rollback.ts';
import type { ServeRuleCheck } from './serve-rule-check.ts';
import type { MirrorSource } from './source.ts';
import { verifyingPool } from './verify-pool.ts';

export interface MirrorOptions {
  /** The mirror folder (made when missing). */
  to: string;
  source: MirrorSource;
  /** The record keys trusted: the statement and every record must be signed by one, or by a key one endorsed. */
  trustedKeys: KeySet;
  /** The log's verifier key (note form); unset: the policy's log line, else the log key the source publishes. */
  logKey?: string;
  /** A tlog-policy: the checkpoint the statement is proven against must be cosigned by its quorum. */
  policy?: TlogPolicy;
  maxAgeMs?: number;
  now?: () => number;
  /** Takes a build earlier in the log than the live one, or whose checkpoint does not extend the live one's (`--allow-rollback`). */
  allowRollback?: boolean;
  /** Packs fetched at once. */
  concurrency?: number;
  /** Bytes asked for in one ranged read (tests make packs take several). */
  chunkBytes?: number;
  /** Stops the run before the swap (INTERRUPTED); what was fetched stays for the next run. */
  signal?: AbortSignal;
  onProgress?: (p: MirrorProgress) => void;
}

export interface MirrorProgress {
  build: string;
  packs: number;
  totalPacks: number;
  /** Bytes fetched so far, of `bytesToFetch` (packs the folder held already are not fetched). */
  bytes: number;
  bytesToFetch: number;
  records: number;
}

export interface MirrorSummary {
  build: string;
  from: string;
  to: string;
  /** True when the build was the mirror's live build already: nothing fetched. */
  unchanged: boolean;
  /** The live build it replaced although it came later in the log (`allowRollback`); null when it did not roll back. */
  rolledBackFrom: string | null;
  records: number;
  packs: { fetched: number; reused: number };
  /** Bytes of packs fetched. */
  bytes: number;
  recordsVerified: number;
  seconds: number;
}

/**
 * Mirrors the source's live build into `opts.to`, and makes it the mirror's live build only when
 * every check holds (mirror/checks.ts): its statement by a trusted key and its domain map, the
 * statement in the log (and witnessed, with a policy), every pack's length and hash, every
 * record's place and signature, the count. Packs the folder holds are linked, not fetched; a pack
 * fetched in part by an interrupted run is continued. A failed check is MIRROR_REFUSED and leaves
 * the previous build live, as the build's own swap does (builder/swap.ts).
 */
export async function mirrorBuild(opts: MirrorOptions): Promise<MirrorSummary> {
  const started = performance.now();
  const { source, to } = opts;
  await mkdir(to, { recursive: true });
  // A records folder `mvr build` writes is never taken over: a mirror's live build replaces only a mirror's.
  if ((await liveBuildId(to)) !== null && !(await stat(join(to, MIRROR_FILE)).catch(() => null)))
    throw new ConfigError(
      `--to ${to} holds a live build that is not a mirror's (no ${MIRROR_FILE}): mirror into an empty folder or a mirror`,
    );
  const release = await acquireBuildLock(to);
  let staging: string | null = null;
  try {
    const { build, keySet } = await source.live();
    const summary = { build, from: source.name, to, records: 0, packs: { fetched: 0, reused: 0 }, bytes: 0, recordsVerified: 0 };
    const seconds = () => (performance.now() - started) / 1000;
    const previous = await liveBuildId(to);
    if (previous === build) return { ...summary, unchanged: true, rolledBackFrom: null, seconds: seconds() };
    const read: BoundedReader = (name, maxBytes) => source.readFile(build, name, maxBytes);
    // The statement first, alone: nothing else of the build is read before it verifies.
    const signed = await checkStatement(read, keySet, opts.trustedKeys, build, source.name);
    const [manifest, own, served] = await Promise.all([
      read(MANIFEST_FILE),
      read(BUILD_CHECKPOINT_FILE),
      read(BUILD_SERVED_CHECKPOINT_FILE),
    ]);
    const checkpoint = servedCheckpointOf(own, served);
    const tiles = new Map<string, Uint8Array>();
    const tileFetch: TileFetch = async (_tile, path) => {
      const bytes = await source.logFile(path);
      if (!bytes) throw new LogInconsistentError(`${source.name} has no log/${path}`);
      tiles.set(path, bytes);
      return bytes;
    };
    const sourceVkey = opts.logKey === undefined && !opts.policy ? ((await source.logVkey())?.toString('utf8') ?? undefined) : undefined;
    const vkey = opts.logKey ?? sourceVkey;
    const { index } = await checkLogged(signed, manifest, checkpoint, tileFetch, signed.keys, {
      vkey,
      policy: opts.policy,
      maxAgeMs: opts.maxAgeMs,
      now: opts.now?.(),
    });
    checkManifest(signed, manifest);
    const live = await livePosition(to);
    const next = { build, issuedAt: signed.statement.issued_at, index, checkpoint: checkpoint! };
    const rollback = live && (await rollbackRefusal(live, next, tileFetch));
    if (rollback && !opts.allowRollback) throw rollback;
    const checked = await checkMap(read, signed, source.name);
    staging = await createStaging(to);
    await writeBuildFiles(staging, {
      statement: checked.statementBytes,
      domainMap: Buffer.from(checked.map.leaves),
      manifest: manifest!,
      ownCheckpoint: own!,
      servedCheckpoint: served,
      keySet,
      logVkey: vkey ?? policyLogKey(opts.policy!, checkpoint!),
      checkpoint: checkpoint!,
    });
    // The compact answers follow from the checked map alone: written here, as the build wrote them, never fetched.
    const compact = checked.map.statement.lookup;
    if (compact?.bits !== undefined && compact.bucket_bytes !== undefined)
      await writeCompactAnswers(staging, checked.map.map, compact.bits, compact.bucket_bytes).catch((error: unknown) => {
        throw new MirrorRefusedError(
          `build ${build} refused: its compact answers do not fit the size it signs (${(error as Error).message})`,
        );
      });
    const lookups = await LookupIndex.open(staging);
    const recordLog = new RecordLogCheck(
      build,
      read,
      logRangeOf(manifest!, build),
      parseCheckpoint(parseNote(checkpoint!).text),
      tileFetch,
      staging,
    );
    const verify = verifyingPool(checked.keys);
    const ends = await mirrorPacks(opts, build, checked, staging, summary, lookups, recordLog, verify)
      .catch(async (error: unknown) => {
        await lookups.abort();
        throw error;
      })
      .finally(() => verify.close());
    await lookups.finish();
    await recordLog.finish();
    await writeLogTiles(staging, tiles);
    await finishBuildFolder(staging, ends, manifest!);
    opts.signal?.throwIfAborted();
    await markMirror(to, { from: source.name, issuer: checked.map.statement.issuer, trustedKeys: opts.trustedKeys });
    if (await hasBuildFolder(to, build)) await removeTree(join(to, BUILDS_DIR, build));
    await swapInBuild(to, staging, build);
    staging = null;
    await writeKept(to, [await keptEntry(to, build)]);
    await pruneBuilds(to, [build, previous]);
    await (await PackPool.of(to)).release(checked.packs.files.map((f) => f.sha256));
    return { ...summary, unchanged: false, rolledBackFrom: rollback ? live!.build : null, seconds: seconds() };
  } catch (error) {
    if (opts.signal?.aborted && !(error instanceof MirrorRefusedError)) {
      const live = await liveBuildId(to);
      throw new MvrError(
        'INTERRUPTED',
        `the mirror was interrupted (${String(opts.signal.reason)}) before its build went live: the packs fetched are kept for the next run; ${live ? `build ${live} stays live` : 'no build is live in the mirror'}`,
      );
    }
    throw error;
  } finally {
    if (staging) await discardStaging(staging).catch(() => undefined);
    await release();
  }
}

/**
 * Every pack of the build, in order: held ones linked, the rest fetched (a few at once, ahead of
 * the checks), each checked with its records before it is linked into the build and its records
 * written to the build's lookup index. The pack index's ends, in map order.
 */
async function mirrorPacks(
  opts: MirrorOptions,
  build: string,
  checked: CheckedStatement,
  staging: string,
  summary: { records: number; packs: { fetched: number; reused: number }; bytes: number; recordsVerified: number },
  lookups: LookupIndex,
  recordLog: RecordLogCheck,
  verify: { check: ServeRuleCheck },
): Promise<Uint32Array> {
  const pool = await PackPool.of(opts.to);
  const files = checked.packs.files;
  const ends = new Uint32Array(checked.map.map.size);
  const bytesToFetch = files.filter((f) => !pool.heldCopy(f.sha256)).reduce((a, f) => a + f.bytes, 0);
  const report = (packs: number) =>
    opts.onProgress?.({ build, packs, totalPacks: files.length, bytes: summary.bytes, bytesToFetch, records: summary.recordsVerified });
  // Each pack is checked as soon as it is fetched (its records' signatures in the verifying
  // workers, one pack a task, so every core verifies while this thread fetches and checks the
  // log); the outcomes are taken in order below, a pack's failure when its turn comes.
  // A pack's entry goes once its outcome is taken: its bytes and records are held no longer than that.
  const checking = new Map<number, Promise<{ path: string; fetched: boolean; pack: CheckedPack | null; error: unknown }>>();
  const start = (k: number) => {
    const file = files[k]!;
    const held = pool.heldCopy(file.sha256);
    const fetching: Promise<{ path: string; fetched: boolean }> = held
      ? Promise.resolve({ path: held, fetched: false })
      : pool
          .fetch(opts.source, build, k, file, {
            chunkBytes: opts.chunkBytes,
            signal: opts.signal,
            onBytes: (n) => {
              summary.bytes += n;
              report(k);
            },
          })
          .then(({ path }) => ({ path, fetched: true }));
    const check = fetching.then(async ({ path, fetched }) => {
      const bytes = await pool.read(path);
      return checkPack(bytes, k, checked, verify.check).then(
        (pack) => ({ path, fetched, pack, error: null }),
        (error: unknown) => ({ path, fetched, pack: null, error }),
      );
    });
    // Checked in order below; a fetch ahead that fails is reported when its turn comes.
    check.catch(() => undefined);
    checking.set(k, check);
  };
  const ahead = Math.max(1, opts.concurrency ?? 4);
  for (let k = 0; k < Math.min(ahead, files.length); k++) start(k);
  report(0);
  for (const [k, file] of files.entries()) {
    const { path, fetched, pack, error } = await checking.get(k)!;
    checking.delete(k);
    if (k + ahead < files.length) start(k + ahead);
    if (!pack) {
      // A pack that is not the signed one goes; after any other failure (a worker's) it stays for the next run.
      if (fetched && error instanceof MirrorRefusedError) await pool.discard(path);
      throw error;
    }
    // The pack is the signed one, kept for the next run even when a record's entry in the log refuses the build.
    const kept = fetched ? await pool.keep(file.sha256, path) : path;
    const at = { number: k, sha256: file.sha256 };
    for (const r of pack.records)
      await recordLog.check(
        r.domain,
        r.shard,
        r.bytes,
        { pack: at, record: { index: r.index, domain: r.domain } },
        () => `record ${r.index} (${r.domain}) of pack ${k} (${file.sha256})`,
      );
    await pool.linkInto(staging, file.sha256, kept);
    ends.set(pack.ends, k * checked.packs.records_per_pack);
    await lookups.add(pack.records);
    summary.records += pack.ends.length;
    summary.recordsVerified += pack.ends.length;
    if (fetched) summary.packs.fetched++;
    else summary.packs.reused++;
    report(k + 1);
    opts.signal?.throwIfAborted();
  }
  if (summary.records !== checked.map.statement.records)
    throw new MirrorRefusedError(
      `build ${build} refused: its packs hold ${summary.records} records, its statement counts ${checked.map.statement.records}`,
    );
  return ends;
}

/** Where the build's records are in the log, as its manifest says (checked by {@link checkLogged} to prove its statement). */
function logRangeOf(manifest: Buffer, build: string): LogRange {
  const log = parseManifest(manifest, `build ${build}'s ${MANIFEST_FILE}`).log;
  if (!log) throw new MirrorRefusedError(`build ${build} refused: its ${MANIFEST_FILE} places no records in the log`);
  return { from: log.from, to: log.to };
}

/** Whether a folder `builds/<id>` of a build not live is there (an earlier run's, or one kept): replaced by the build mirrored now. */
async function hasBuildFolder(to: string, build: string): Promise<boolean> {
  return (await stat(join(to, BUILDS_DIR, build)).catch(() => null)) !== null;
}

/** The policy's log key for the checkpoint's origin, in note form (a policy names its logs by their keys). */
function policyLogKey(policy: TlogPolicy, checkpoint: string): string {
  const origin = parseCheckpoint(parseNote(checkpoint).text).origin;
  const log = policy.logs.find((l) => l.vkey.name === origin) ?? policy.logs[0]!;
  return formatVerifierKey(log.vkey);
}
