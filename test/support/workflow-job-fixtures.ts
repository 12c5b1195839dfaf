/**
 * What the build job's tests hand it, made in-process (what they are is not under test; the job's
 * own `mvr` runs are): signing keys old and new, the audits as a tarball, log keys, and the log a
 * build published last month; and what the tests read back from a run.
 */
import { execFile } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { runBuild } from '../../builder/build.ts';
import { defaultSchemaUrl } from '../../core/rules/record.ts';
import { createLogKey, LOG_KEY_FILE, logOrigin } from '../../keyring/log-key.ts';
import { keygen } from '../../keyring/signing-keys.ts';
import { buildOptions } from './project.ts';
import { ROOT } from './workflow.ts';
import { filesUnder, type JobRun, temp } from './workflow-job.ts';

const run = promisify(execFile);

export interface JobFixtures {
  /** The folder they are in. */
  fixtures: string;
  oldKid: string;
  /** A key set file listing the old key. */
  oldPublicSet: string;
  newKid: string;
  /** The signing key secret. */
  newPrivateJwk: string;
  newD: string;
  auditsTarball: string;
  /** The log key secret, for the issuer. */
  logKey: string;
  /** One for the default issuer (dry runs without MVR_ISSUER). */
  defaultIssuerLogKey: string;
  /** A log published last month (a folder standing for https://<issuer>/log). */
  publishedLog: string;
}

export async function makeJobFixtures(issuer: string, defaultIssuer: string): Promise<JobFixtures> {
  const fixtures = temp('mvr-ops-fixtures-');
  const signingKey = async (dir: string) => {
    const kid = await keygen(dir);
    return { kid, jwk: readFileSync(join(dir, 'signing', `${kid}.jwk.json`), 'utf8') };
  };
  const logKeyText = async (dir: string, issuer: string) => {
    await createLogKey(dir, logOrigin(issuer));
    return readFileSync(join(dir, LOG_KEY_FILE), 'utf8');
  };
  // Last month's build published the log (33 entries); this month's must extend it.
  const last = join(fixtures, 'last-month');
  const lastMonth = async () => {
    logKey = await logKeyText(join(fixtures, 'log-keys'), issuer);
    const dirs = {
      auditsDir: join(ROOT, 'audits'),
      recordsDir: join(last, 'records'),
      publicDir: join(last, 'public'),
      keysDir: join(fixtures, 'log-keys'),
    };
    await runBuild(buildOptions(dirs, { issuer, schemaUrl: defaultSchemaUrl(issuer), now: Date.parse('2026-10-20T00:00:00Z') }));
  };
  let logKey = '';
  let defaultIssuerLogKey = '';
  const auditsTarball = join(fixtures, 'audits.tar.gz');
  const [oldKey, newKey] = await Promise.all([
    signingKey(join(fixtures, 'old-keys')),
    signingKey(join(fixtures, 'new-keys')),
    lastMonth(),
    logKeyText(join(fixtures, 'default-log-keys'), defaultIssuer).then((text) => (defaultIssuerLogKey = text)),
    run('tar', ['-czf', auditsTarball, '-C', join(ROOT, 'audits'), '.']),
  ]);
  const { d: _drop, ...oldPublic } = JSON.parse(oldKey.jwk) as Record<string, string>;
  const oldPublicSet = join(fixtures, 'published-keys.json');
  writeFileSync(oldPublicSet, JSON.stringify({ keys: [{ ...oldPublic, use: 'sig', alg: 'EdDSA' }] }));
  return {
    fixtures,
    oldKid: oldKey.kid,
    oldPublicSet,
    newKid: newKey.kid,
    newPrivateJwk: newKey.jwk,
    newD: (JSON.parse(newKey.jwk) as { d: string }).d,
    auditsTarball,
    logKey,
    defaultIssuerLogKey,
    publishedLog: join(last, 'public', 'log'),
  };
}

/** The key ids of the key set a run published. */
export const keySetOf = (r: JobRun) =>
  (
    JSON.parse(readFileSync(join(r.workspace, 'public', '.well-known', 'merchant-verify-keys.json'), 'utf8')) as {
      keys: { kid: string }[];
    }
  ).keys.map((k) => k.kid);

/** Fails naming the file when any file of the run (up to 5 MB each) holds `secret`. */
export const expectInNoFile = (r: JobRun, secret: string) => {
  for (const file of [...filesUnder(r.workspace), ...filesUnder(r.runnerTemp)]) {
    if (statSync(file).size <= 5_000_000) expect(readFileSync(file, 'latin1').includes(secret), file).toBe(false);
  }
};
