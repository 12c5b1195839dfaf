import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { KEY_SET_PATH, type KeySet } from '@merchant-verify/verifier';
import type { SigningKey } from '../core/crypto/signing.ts';
import { BuildError, ConfigError } from '../core/errors/errors.ts';
import { type LogKey, loadLogKey, logOrigin } from '../keyring/log-key.ts';
import { loadActiveKey, publishedKeySet } from '../keyring/signing-keys.ts';
import { type KeptBuild, readKept } from '../storage/kept-builds.ts';
import { readWitnessPolicy, type Witnessing } from '../witness/build-phase/witnessing.ts';
import { listAuditFiles } from './inputs.ts';
import { withKeptKeys } from './kept.ts';
import { type BuildOptions, DEFAULT_KEEP } from './options.ts';
import { openPublishedLog, type PublishedLog } from './published-log.ts';

/** The log a build appends to: its key, its origin and the log as published before. */
export interface LogTarget {
  key: LogKey;
  origin: string;
  published: PublishedLog;
}

/** What a build is made from, all read (and refused if wrong) before any audit is. */
export interface BuildInputs {
  /** The signing key, or null for an unsigned build. */
  key: SigningKey | null;
  /** The transparency log, or null without a log key. */
  log: LogTarget | null;
  /** How many builds are kept, the new one included. */
  keep: number;
  /** The kept builds as this build found them, the live one first. */
  keptBefore: KeptBuild[];
  /** The kept builds this one keeps beside itself (its change feeds compare against them). */
  earlier: KeptBuild[];
  keySetFile: string;
  keySet: KeySet;
  auditFiles: { path: string; size: number }[];
  /** The witnesses whose quorum must cosign the log's new checkpoint; null without a policy or with `quorum none`. */
  witnessing: Witnessing | null;
}

/** Reads the keys, the published log, the kept builds and the list of audit files, in that order. */
export async function readBuildInputs(opts: BuildOptions): Promise<BuildInputs> {
  const key = await loadActiveKey(opts.keysDir, opts.signingKey);
  if (!key)
    opts.onWarning?.(
      'no signing key configured (run "mvr keygen" or set MVR_SIGNING_KEY): records are UNSIGNED and the key set is empty (a gateway serves them only with --unsigned)',
    );
  const log = await openLogTarget(opts);
  const witnessing = await readWitnessPolicy(opts.witnessPolicy, log?.key.verifierKey);
  if (witnessing && !log)
    throw new ConfigError(
      `--witness-policy ${witnessing.file} names witnesses, but there is no log key: the build has no checkpoint to cosign`,
    );
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
  const auditFiles = await listAuditFiles(opts.auditsDir);
  return { key, log, keep, keptBefore, earlier, keySetFile, keySet, auditFiles, witnessing };
}

/** The log key and the published log it extends; a log the build would refuse is refused now, before any audit is read (a month's work). */
async function openLogTarget(opts: BuildOptions): Promise<LogTarget | null> {
  const key = await loadLogKey(opts.keysDir, opts.logKey);
  const origin = logOrigin(opts.issuer);
  if (!key) return null;
  if (key.name !== origin)
    throw new ConfigError(
      `the log key is named "${key.name}", but the log of issuer ${opts.issuer} is "${origin}" (a log key is made for one issuer: "mvr keygen --log --issuer ${opts.issuer}")`,
    );
  return { key, origin, published: await openPublishedLog(opts.publicDir, key, origin) };
}
