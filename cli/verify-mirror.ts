import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KEY_SET_PATH, trustedKeySet, verifyOnline } from '@merchant-verify/verifier';
import { readFileOrUrl } from '../clients/file-or-url.ts';
import { ConfigError, NotInLogError } from '../core/errors/errors.ts';
import { LOG_VKEY_PATH } from '../core/layout.ts';
import { normalizeDomain } from '../core/rules/domain.ts';
import { defaultSchemaUrl } from '../core/rules/record.ts';
import { trustJson } from '../presentation/trust-report.ts';
import { bundleFor } from '../service/bundles.ts';
import { openRecordsStack } from '../service/records-stack.ts';
import { mirrorFolderOf } from '../storage/mirror-folder.ts';
import { namingLogKey } from './verify-action.ts';
import { type Outcome, present } from './verify-output.ts';
import { witnessOptionsOf } from './witness-policy.ts';

/**
 * `mvr verify DOMAIN --mirror DIR`: the answer a gateway on the mirror would give, made offline
 * from the mirror's live build by the records service (its record, or the proof that it has none,
 * with the statement's proof from the mirror's log files), and verified by the package against the
 * mirror's key set as far as the keys the mirror trusted allow, and its log key (with --log, a
 * record's bundle too, which proves it the mirror's live build's).
 */
export async function verifyFromMirror(args: Record<string, unknown>, dir: string): Promise<Outcome> {
  if (typeof args.domain !== 'string' || args.domain === '') throw new ConfigError('--mirror: give the DOMAIN to look up');
  for (const flag of ['file', 'absence', 'proof', 'base-url', 'private', 'build', 'checkpoint'])
    if (args[flag] !== undefined && args[flag] !== false)
      throw new ConfigError(`--mirror answers from the mirror alone: --${flag} does not go with it`);
  const mirror = mirrorFolderOf(dir);
  if (!mirror) throw new ConfigError(`--mirror ${dir}: not a mirror folder (no mirror.json; make one with "mvr mirror --to ${dir}")`);
  const domain = normalizeDomain(args.domain);
  const witness = await witnessOptionsOf(args);
  const issuer = mirror.issuer ?? 'merchant-verify.example';
  const stack = await openRecordsStack({
    store: { url: dir, publicDir: mirror.publicDir },
    trust: { trustedKeys: mirror.trustedKeys },
    issuer,
    schemaUrl: defaultSchemaUrl(issuer),
    cacheBytes: 1 << 20,
  });
  try {
    const served = await stack.records.recordFor(domain);
    const answer = JSON.parse(served.bytes.toString('utf8')) as unknown;
    const keySetFile = join(mirror.publicDir, KEY_SET_PATH);
    const logKeyFile = join(mirror.publicDir, LOG_VKEY_PATH);
    const keySet = trustedKeySet(JSON.parse(await readFile(keySetFile, 'utf8')), mirror.trustedKeys).keySet;
    // A never-audited answer stands on its absence proof, whose build statement is proven in the
    // mirror's log files; with --log a record's own log proof is made from them too, as the
    // mirror's gateway serves it (none, NOT_IN_LOG, in a mirror made before it kept them).
    const absence = served.audited ? undefined : await stack.proofs.absenceFor(domain);
    // The log key the mirror keeps, unless the caller pins one with --log-key (which, as online, implies --log).
    const givenLogKey = typeof args['log-key'] === 'string' && args['log-key'] !== '' ? args['log-key'] : undefined;
    const withLog = absence !== undefined || args.log === true || givenLogKey !== undefined;
    const vkey = !withLog
      ? ''
      : givenLogKey === undefined
        ? await readFile(logKeyFile, 'utf8')
        : (await readFileOrUrl(givenLogKey)).toString('utf8');
    const verification = await namingLogKey(givenLogKey, () =>
      verifyOnline({
        domain,
        answer,
        keySet,
        ...(withLog ? { log: true, vkey: vkey.trim(), ...witness } : {}),
        ...(absence ? { absence } : {}),
        // As a gateway's source: a record it keeps no proof of is null, which the package reports as NOT_IN_LOG; with
        // the log, a record is tied to the mirror's live build by its bundle, as online (its statement the last entry
        // of the checkpoint the mirror proved it against), so its `current` is proven, not left unknown.
        source: {
          proof: () => proofOrNull(() => stack.proofs.proofFor(domain)),
          bundle: async () => JSON.stringify(await bundleFor(stack.records, stack.proofs, domain)),
        },
      }),
    );
    // The mirror's keys are the ones it verified its builds with: pinned, never taken from the source it copied.
    const trust = trustJson(verification.trust, { keySet: keySetFile, pinnedKeys: true, logKey: { given: givenLogKey ?? logKeyFile } });
    return present(verification, `mirror ${dir}`, { policy: withLog && witness !== undefined, trust });
  } finally {
    await stack.close();
  }
}

/** A record's log proof, or null when the mirror keeps none of it (NOT_IN_LOG): the verdict says so, it is no failure to read. */
async function proofOrNull(proofFor: () => Promise<{ proof: string }>): Promise<string | null> {
  try {
    return (await proofFor()).proof;
  } catch (error) {
    if (error instanceof NotInLogError) return null;
    throw error;
  }
}
