import { availableParallelism } from 'node:os';
import type { SigningKey } from '../core/crypto/signing.ts';
import { type AuditProblem, BuildError, InvalidAuditsError } from '../core/errors/errors.ts';
import { normalizeDomain } from '../core/rules/domain.ts';
import type { WorkerInit } from './audit-signer.ts';
import { MAX_PROBLEMS_KEPT, type Outcome, processAll, sortProblems } from './dispatch.ts';
import { type AuditItem, readAuditFile } from './inputs.ts';
import type { BuildOptions } from './options.ts';
import { type ShardSource, spilledRecords } from './shard-records.ts';

type AuditFile = { path: string; size: number };

/**
 * Audit bytes a default worker thread is started for: about 3,000 audits, a second of one
 * worker's signing. A thread costs about a tenth to a quarter of a second of CPU to start (Node's
 * own start-up in the thread, then the bundled worker evaluated), so a build of up to this many
 * bytes (the samples, a team's first month, a test's project) signs on the build's own thread,
 * and a larger one starts a thread per this many bytes rather than one per core.
 */
const BYTES_PER_WORKER = 1024 * 1024;

/** What the records phase leaves: every audit valid, its record signed and spilled into staging (a domain audited twice is found by the index). */
export interface SignedRecords {
  written: number;
  byStatus: Record<string, number>;
  byTier: Record<string, number>;
  workers: number;
}

/**
 * Reads every audit file and spills one signed record per audit into the staging folder, or
 * refuses the build: any invalid audit (all of them named, a duplicated one too, up to a limit),
 * or no audit at all unless an empty build was asked for.
 */
export async function signAudits(
  opts: BuildOptions,
  files: AuditFile[],
  key: SigningKey | null,
  stagingDir: string,
  issuedAt: string,
  started: number,
): Promise<SignedRecords> {
  const init: WorkerInit = {
    stagingDir,
    signingKey: key ? JSON.stringify({ kty: 'OKP', crv: 'Ed25519', ...key.privateKey.export({ format: 'jwk' }) }) : null,
    context: { issuer: opts.issuer, schemaUrl: opts.schemaUrl, issuedAt },
    tree: opts.tree ?? false,
  };
  const workers = opts.workers ?? defaultWorkers(files);
  const outcome = await processAll(files, init, workers, opts, started);
  // A failing build reports every problem at once: the duplicates among the spilled records too
  // (a build without other problems finds them as it writes the index: refuseDuplicates).
  if (Object.keys(outcome.byKind).length > 0) await refuseProblems(outcome, duplicateDomains(spilledRecords(stagingDir)), files);
  if (outcome.audits === 0 && !opts.allowEmpty) {
    throw new BuildError(
      `no audits in ${files.length} file${files.length === 1 ? '' : 's'} under ${opts.auditsDir}; refusing to publish an empty build, which would withdraw every record (use --allow-empty)`,
    );
  }
  return { written: outcome.written, ...countsByStatusAndTier(outcome.counts), workers };
}

/**
 * None up to a MiB of audits (signed on the build's thread), then one worker per MiB, at most one
 * more than cores: measured when each worker also created one file a record (about a fifth of its
 * time, in the kernel), the extra worker kept a core busy meanwhile (2 cores, 1M audits: 5,292 ->
 * 5,965 records/s; peak RSS 218 -> 256 MB). Without the per-record tree (decision 0090) a worker
 * waits on little but its batches; the rule has not been measured again since.
 */
export function defaultWorkers(files: AuditFile[]): number {
  const bytes = files.reduce((n, f) => n + f.size, 0);
  if (bytes <= BYTES_PER_WORKER) return 0;
  return Math.min(availableParallelism() + 1, Math.ceil(bytes / BYTES_PER_WORKER));
}

/** Throws INVALID_AUDITS for the domains audited more than once, when the index found some. */
export async function refuseDuplicates(files: AuditFile[], domains: Set<string>): Promise<void> {
  await refuseProblems({ byKind: {}, problems: [] }, domains, files);
}

/** The domains among the spilled records more than once, a shard at a time. */
function duplicateDomains(source: ShardSource): Set<string> {
  const twice = new Set<string>();
  for (const shard of source.shards()) {
    const records = source.read(shard);
    for (let i = 1; i < records.length; i++) if (records[i]!.domain === records[i - 1]!.domain) twice.add(records[i]!.domain);
  }
  return twice;
}

/**
 * Throws INVALID_AUDITS with every problem of the one pass over the audits: the workers' (schema,
 * dates, record size) and a problem for each audit of a domain already audited.
 */
async function refuseProblems(outcome: Pick<Outcome, 'byKind' | 'problems'>, twice: Set<string>, files: AuditFile[]): Promise<void> {
  const duplicates = twice.size > 0 ? await duplicateProblems(files, twice) : null;
  const byKind = duplicates ? { ...outcome.byKind, duplicate: duplicates.count } : outcome.byKind;
  if (Object.keys(byKind).length === 0) return;
  const problems = sortProblems([...(duplicates?.kept ?? []), ...outcome.problems]).slice(0, MAX_PROBLEMS_KEPT);
  throw new InvalidAuditsError(problems, byKind);
}

/** Records by status and by tier, from the workers' `status/tier` buckets, keys sorted. */
function countsByStatusAndTier(counts: Record<string, number>): Pick<SignedRecords, 'byStatus' | 'byTier'> {
  const byStatus: Record<string, number> = {},
    byTier: Record<string, number> = {};
  for (const [bucket, n] of Object.entries(counts)) {
    const [status, tier] = bucket.split('/') as [string, string];
    byStatus[status] = (byStatus[status] ?? 0) + n;
    byTier[tier] = (byTier[tier] ?? 0) + n;
  }
  return { byStatus: sortKeys(byStatus), byTier: sortKeys(byTier) };
}

/**
 * Finds where each duplicated domain is audited, by reading the files again (the workers keep no
 * per-domain memory, so that 1M domains stay flat; this runs only when a duplicate was seen).
 * Each audit after a domain's first is one problem naming both places: 2,000 audits of one
 * domain are 1,999 short lines, not one line of 1,999 places. The first {@link MAX_PROBLEMS_KEPT}
 * are kept, all are counted.
 */
async function duplicateProblems(files: { path: string }[], domains: Set<string>): Promise<{ kept: AuditProblem[]; count: number }> {
  const first = new Map<string, string>();
  const kept: AuditProblem[] = [];
  let count = 0;
  for (const file of files) {
    for await (const item of readAuditFile(
      file.path,
      () => undefined,
      () => undefined,
    )) {
      const audited = domainOf(item);
      if (audited === null || !domains.has(audited.domain)) continue;
      const at = first.get(audited.domain);
      if (at === undefined) {
        first.set(audited.domain, item.source);
        continue;
      }
      count++;
      if (kept.length < MAX_PROBLEMS_KEPT)
        kept.push({
          source: item.source,
          member: 'domain',
          kind: 'duplicate',
          message: `duplicate domain "${audited.domain}" (after normalization, "${audited.given}" here), first audited at ${at}`,
        });
    }
  }
  return { kept, count };
}

/** The normalized domain of an audit as read, and as given; null when it has none (the first pass reported that). */
function domainOf(item: AuditItem): { domain: string; given: string } | null {
  try {
    const value: unknown = 'text' in item ? JSON.parse(item.text) : item.value;
    const given = (value as { domain?: unknown } | null)?.domain;
    return { domain: normalizeDomain(given), given: String(given) };
  } catch {
    return null;
  }
}

function sortKeys(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}
