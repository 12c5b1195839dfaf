import { mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { KeySet } from '@merchant-verify/verifier';
import { canonicalJson } from '#shared';
import { writeAtomic } from '../core/files.ts';
import { BUILDS_DIR, LOG_CHECKPOINT, LOG_DIR, LOG_VKEY_PATH, MANIFEST_FILE } from '../core/layout.ts';
import { manifestText } from '../core/schemas/manifest.ts';
import { copyVerifyPage } from '../core/verify-page.ts';
import type { KeptBuild } from '../storage/kept-builds.ts';
import type { BuildInputs } from './build-inputs.ts';
import { type ShardRun, writeChanges } from './changes.ts';
import { appendBuildToLog, type LogStep } from './log.ts';
import type { BuildOptions, BuildPhase } from './options.ts';
import type { PackedRecords } from './packs.ts';
import type { SignedRecords } from './sign-audits.ts';

/** A build's identity as its statement and manifest name it. */
export interface BuildIdentity {
  buildId: string;
  issuedAt: string;
}

/** The change feeds against every build kept before this one (part of the build: all or nothing); the changes written. */
export async function writeChangeFeeds(
  stagingDir: string,
  earlier: KeptBuild[],
  recordsDir: string,
  phase: (name: BuildPhase) => void,
): Promise<number> {
  let changes = 0;
  if (earlier.length > 0) phase('changes');
  for (const b of earlier) changes += await writeChanges(stagingDir, b.id, join(recordsDir, BUILDS_DIR, b.id));
  return changes;
}

/**
 * The transparency log: every record appended, new tiles written, the checkpoint signed (published
 * once live), and the log's verifier key beside the key set. Without a log key, a warning; null.
 */
export async function appendToLog(
  stagingDir: string,
  runs: ShardRun[],
  records: PackedRecords,
  inputs: BuildInputs,
  opts: BuildOptions,
  issuedAt: string,
  phase: (name: BuildPhase) => void,
): Promise<LogStep | null> {
  if (!inputs.log) {
    const logged = await stat(join(opts.publicDir, LOG_DIR, LOG_CHECKPOINT)).catch(() => null);
    opts.onWarning?.(
      logged
        ? `no log key (keys/log.key or MVR_LOG_KEY): this build's records are NOT appended to the log in ${join(opts.publicDir, LOG_DIR)}`
        : 'no log key configured (run "mvr keygen --log" or set MVR_LOG_KEY): records are not appended to a transparency log',
    );
    return null;
  }
  phase('log');
  const { key, origin, published } = inputs.log;
  const step = await appendBuildToLog({ log: published, buildDir: stagingDir, runs, records, key, origin, issuedAt, signal: opts.signal });
  await mkdir(dirname(join(opts.publicDir, LOG_VKEY_PATH)), { recursive: true });
  await writeAtomic(join(opts.publicDir, LOG_VKEY_PATH), `${key.vkey}\n`);
  return step;
}

/** The build's manifest, in staging: what it holds, signed by which key, where its records are in the log. */
export async function writeManifest(
  stagingDir: string,
  opts: BuildOptions,
  inputs: BuildInputs,
  records: SignedRecords,
  issuedAt: string,
  logStep: LogStep | null,
): Promise<void> {
  const manifest = manifestText({
    issuer: opts.issuer,
    issued_at: issuedAt,
    schema: opts.schemaUrl,
    records: records.written,
    by_status: records.byStatus,
    by_tier: records.byTier,
    key_id: inputs.key?.kid ?? null,
    key_ids_published: inputs.keySet.keys.map((k) => k.kid),
    // Where this build is in the log: entries [from, to) of the log named origin, its statement the last.
    log:
      logStep && inputs.log
        ? { origin: inputs.log.origin, from: logStep.summary.from, to: logStep.summary.to, statement: logStep.summary.statement }
        : null,
  });
  await writeFile(join(stagingDir, MANIFEST_FILE), manifest);
}

/** The key set, and the verify page beside it, so a CDN serving public/ serves the page too. */
export async function writeKeySet(opts: BuildOptions, keySetFile: string, keySet: KeySet): Promise<void> {
  await mkdir(dirname(keySetFile), { recursive: true });
  await writeAtomic(keySetFile, `${canonicalJson(keySet)}\n`);
  if (!(await copyVerifyPage(opts.publicDir)))
    opts.onWarning?.('the verify page is not built (run "npm run build"): public/verify/ was not written');
}
