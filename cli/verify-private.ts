import {
  type CompactVerification,
  gatewaySource,
  KEY_SET_PATH,
  LOG_KEY_PATH,
  trustedKeySet,
  verifyOnlineCompact,
} from '@merchant-verify/verifier';
import { isUrl, readFileOrUrl } from '../clients/file-or-url.ts';
import { fetchKeyConfig, ohttpSource } from '../clients/ohttp-client.ts';
import { ConfigError, exitCodeOf } from '../core/errors/errors.ts';
import { normalizeDomain } from '../core/rules/domain.ts';
import { witnessedText } from '../core/rules/witnessed.ts';
import { entryLines, entryVerificationJson, statementFailureJson } from '../presentation/entry-json.ts';
import { type TrustJson, trustJson, trustLines } from '../presentation/trust-report.ts';
import { readTrustedKeys } from './trust-options.ts';
import { jsonFile, keySetFlagOf, keySetPathOf } from './verify-action.ts';
import { type Outcome, present } from './verify-output.ts';
import { trustedCheckpointOf, witnessOptionsOf } from './witness-policy.ts';

// `mvr verify DOMAIN --private`: the gateway is asked for the live statement, then the bucket of the
// domain's hash that statement's bits give, never the domain; the package's compact client
// (verifyOnlineCompact) fetches and verifies.

/** Verifies DOMAIN through a compact private lookup; `gateway` is the resolved --base-url, --api-key and --ohttp-relay. */
export async function verifyPrivately(
  args: Record<string, unknown>,
  gateway: { baseUrl?: string; apiKey?: string; ohttpRelay?: string },
): Promise<Outcome> {
  const str = (k: string) => (typeof args[k] === 'string' && args[k] !== '' ? (args[k] as string) : undefined);
  const { baseUrl, apiKey } = gateway;
  if (!str('domain')) throw new ConfigError('--private: give the DOMAIN to look up');
  for (const flag of ['file', 'absence', 'proof', 'build'])
    if (str(flag)) throw new ConfigError(`--private looks the domain up by its hash prefix; --${flag} verifies a saved answer instead`);
  if (!baseUrl || !apiKey) throw new ConfigError('--private needs --base-url and --api-key (or MVR_BASE_URL and MVR_API_KEY)');
  // Normalized here, with the function the gateway and the build use; only a prefix of its hash leaves.
  const domain = normalizeDomain(str('domain'));
  const { keys, flag: keysFlag } = keySetFlagOf(args);
  const trusted = str('trusted-keys') ? await readTrustedKeys(str('trusted-keys')!) : undefined;
  const pinned = (keySet: unknown): unknown => (trusted === undefined ? keySet : trustedKeySet(keySet, trusted).keySet);
  const relayUrl = gateway.ohttpRelay;
  if (relayUrl && keys !== undefined && isUrl(keys))
    throw new ConfigError('--ohttp-relay: the key set comes through the relay from the gateway, or from a file; not from another URL');
  // Through a relay: the key configuration from the gateway (RFC 9540), every request sealed to it,
  // and refused at the first answer unless the build signed it.
  const fetched = relayUrl
    ? ohttpSource({ baseUrl, apiKey, relayUrl, keyConfig: await fetchKeyConfig(baseUrl) })
    : gatewaySource({ baseUrl, apiKey, keySetUrl: keys !== undefined && isUrl(keys) ? keys : undefined });
  const keySetFile =
    keys !== undefined && !isUrl(keys) ? pinned(await jsonFile(await keySetPathOf(keys, keysFlag), `${keysFlag} ${keys}`)) : undefined;
  const logKey = str('log-key');
  const verdict = await verifyOnlineCompact({
    domain,
    source: {
      lookupStatement: fetched.lookupStatement,
      compact: fetched.compact,
      keySet: async () => pinned(await fetched.keySet()),
      logKey: fetched.logKey,
    },
    keySet: keySetFile,
    vkey: logKey === undefined ? undefined : (await readFileOrUrl(logKey)).toString('utf8'),
    log: Boolean(args.log),
    ...(await witnessOptionsOf(args)),
    ...(await trustedCheckpointOf(args)),
  });
  const base = baseUrl.replace(/\/+$/, '');
  const trust = trustJson(verdict.trust, {
    keySet: keys ?? `${base}${KEY_SET_PATH}`,
    pinnedKeys: trusted !== undefined,
    logKey: { given: logKey, policy: str('policy'), fetched: `${base}${LOG_KEY_PATH}` },
  });
  const source = `${base}/v1/lookup/${verdict.bucket}${relayUrl ? ` (through ${new URL(relayUrl).origin})` : ''}`;
  return outcomeOf(verdict, domain, source, { policy: str('policy') !== undefined, log: Boolean(args.log) }, trust);
}

/**
 * What `mvr verify --private` prints: a proven absence as `mvr verify` shows it (its log and
 * witness steps are the build statement's); a proven entry as its verdict (status, tier, score,
 * next audit, the record's hash, the statement's steps) with the record said to be unfetched; or
 * why the answer did not hold, in the same JSON shape with no step run.
 */
function outcomeOf(
  v: CompactVerification,
  domain: string,
  source: string,
  asked: { policy: boolean; log: boolean },
  trust: TrustJson,
): Outcome {
  const { policy } = asked;
  if (v.verification) return present(v.verification, source, { policy, trust, private: true });
  if (v.entry) {
    const { valid, code, message, domain: d, domain_unicode, ...steps } = entryVerificationJson({ ...v, entry: v.entry }, policy, trust);
    const json = { valid, code, message, domain: d, domain_unicode, source, ...steps, private: true };
    const head = valid ? `VALID: ${domain}` : `INVALID (${code}): ${message}`;
    const witnesses = steps.witnesses as { valid: boolean; code: string | null; message: string | null } | null;
    const lines = [
      head,
      ...entryLines(json),
      `  source     ${source}`,
      ...(witnesses
        ? [
            `  witnesses  ${witnesses.valid && v.witnessed ? witnessedText(v.witnessed) : `NOT PROVEN: ${witnesses.code} (${witnesses.message})`}`,
          ]
        : []),
      ...trustLines(trust),
    ];
    return { json, text: `${lines.join('\n')}\n`, exitCode: v.code === null ? 0 : exitCodeOf(v.code) };
  }
  const code = v.code ?? 'INCOMPLETE_PREFIX_ANSWER';
  const message = v.message ?? code;
  const statement = statementFailureJson(v, domain, policy, asked.log, trust);
  if (statement) {
    const { valid, code: c, message: m, domain: d, domain_unicode, ...steps } = statement;
    const lines = [
      `INVALID (${code}): ${message}`,
      `  domain     ${domain}`,
      `  statement  NOT PROVEN: ${code} (${message})`,
      ...(steps.witnesses ? [`  witnesses  NOT PROVEN: ${code} (${message})`] : []),
      `  source     ${source}`,
      ...trustLines(trust),
    ];
    return {
      json: { valid, code: c, message: m, domain: d, domain_unicode, source, ...steps, private: true },
      text: `${lines.join('\n')}\n`,
      exitCode: exitCodeOf(code),
    };
  }
  return {
    json: {
      valid: false,
      code,
      message,
      domain,
      source,
      ...{ signature: null, absence: null, entry: null, log: null, witnesses: null, staleness: null, trust, claims: null },
      private: true,
    },
    text: `INVALID (${code}): ${message}\n  domain     ${domain}\n  source     ${source}\n`,
    exitCode: exitCodeOf(code),
  };
}
