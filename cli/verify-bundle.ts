import { readFile, writeFile } from 'node:fs/promises';
import { gatewaySource, trustedKeySet, verifyBundle } from '@merchant-verify/verifier';
import { NoteError, parseTimestamp } from '#shared';
import { isUrl, readFileOrUrl } from '../clients/file-or-url.ts';
import { ConfigError, UsageError } from '../core/errors/errors.ts';
import { normalizeDomain } from '../core/rules/domain.ts';
import type { TrustJson } from '../presentation/trust-report.ts';
import { readTrustedKeys } from './trust-options.ts';
import { jsonFile, keySetFlagOf, keySetPathOf } from './verify-action.ts';
import { type Outcome, present } from './verify-output.ts';
import { witnessOptionsOf } from './witness-policy.ts';

// `mvr verify --bundle FILE` (offline: nothing is fetched) and `mvr verify DOMAIN --bundle-out FILE`
// (fetch the gateway's bundle, keep it, verify it): flags mapped to `verifyBundle`'s options.

/** Flags that verify something else than a bundle. */
const OTHER_ANSWERS = ['file', 'absence', 'proof', 'private', 'mirror'] as const;

/** Verifies a bundle as the flags say; `gateway` is the resolved --base-url and --api-key (used by --bundle-out only). */
export async function verifyFromBundle(args: Record<string, unknown>, gateway: { baseUrl?: string; apiKey?: string }): Promise<Outcome> {
  const str = (k: string) => (typeof args[k] === 'string' && args[k] !== '' ? (args[k] as string) : undefined);
  const [file, out] = [str('bundle'), str('bundle-out')];
  if (file && out) throw new UsageError('--bundle verifies a kept bundle, --bundle-out fetches one: give one of them');
  const flag = file ? '--bundle' : '--bundle-out';
  const { keys, flag: keysFlag } = keySetFlagOf(args);
  for (const other of OTHER_ANSWERS)
    if (args[other] !== undefined && args[other] !== false)
      throw new UsageError(`${flag} verifies a bundle: --${other} does not go with it`);
  const domain = str('domain') ? normalizeDomain(str('domain')) : undefined;
  const witness = await witnessOptionsOf(args);
  const at = atOf(str('at'));
  let text: string;
  let online: ReturnType<typeof gatewaySource> | undefined;
  if (file) {
    // Offline: the bundle, the keys and the log's key are files; nothing is fetched.
    for (const [flag, value] of [
      [keysFlag, keys],
      ['--log-key', str('log-key')],
    ])
      if (value && isUrl(value)) throw new UsageError(`--bundle verifies offline: ${flag} must be a file, not ${value}`);
    if (!keys && !str('trusted-keys'))
      throw new ConfigError('--bundle needs the keys to check with: --key-set FILE or --trusted-keys FILE');
    text = await readFile(file, 'utf8').catch((error: Error) => Promise.reject(new ConfigError(`--bundle ${file}: ${error.message}`)));
  } else {
    if (!domain) throw new ConfigError('--bundle-out: give the DOMAIN to fetch the bundle of');
    if (!gateway.baseUrl || !gateway.apiKey)
      throw new ConfigError('--bundle-out needs --base-url and --api-key (or MVR_BASE_URL and MVR_API_KEY)');
    if (at !== undefined) throw new UsageError('--at verifies a kept bundle as of a past time: give --bundle FILE');
    online = gatewaySource({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, keySetUrl: keys });
    text = await online.bundle!(domain);
    // Kept as fetched, before it is verified: a shop keeps what the gateway said, whatever the verdict.
    await writeFile(out!, text).catch((error: Error) => Promise.reject(new ConfigError(`--bundle-out ${out}: ${error.message}`)));
  }
  let bundle: unknown;
  try {
    bundle = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file ? `--bundle ${file}` : 'the bundle'}: ${(error as Error).message}`);
  }
  const trusted = str('trusted-keys') ? await readTrustedKeys(str('trusted-keys')!) : undefined;
  const given =
    keys && !isUrl(keys)
      ? await jsonFile(await keySetPathOf(keys, keysFlag), `${keysFlag} ${keys}`)
      : online
        ? await online.keySet()
        : trusted;
  const keySet = trusted === undefined ? given : trustedKeySet(given, trusted).keySet;
  // The log step: with a log key (a file; fetched from the gateway with --bundle-out and --log), or a policy's log line.
  const vkeyText = str('log-key')
    ? (await readFileOrUrl(str('log-key')!)).toString('utf8')
    : online && args.log
      ? await online.logKey()
      : undefined;
  try {
    const verification = verifyBundle({
      bundle,
      keySet,
      ...(domain ? { domain } : {}),
      ...(vkeyText === undefined ? {} : { log: { vkey: vkeyText.trim() } }),
      ...witness,
      ...(at === undefined ? {} : { now: at }),
    });
    const keySetSource = keys && !isUrl(keys) ? keys : online ? (keys ?? `${gateway.baseUrl}`) : str('trusted-keys')!;
    const trust: TrustJson = {
      key_set: online && !(keys && !isUrl(keys)) && trusted === undefined ? 'first_use' : 'pinned',
      key_set_source: keySetSource,
      log_key: str('log-key') ? 'pinned' : vkeyText !== undefined ? 'first_use' : witness !== undefined ? 'policy' : null,
      log_key_source: str('log-key') ?? (vkeyText !== undefined ? `${gateway.baseUrl}` : null),
    };
    return present(verification, file ? `bundle ${file}` : `bundle ${out} from ${gateway.baseUrl}`, {
      policy: witness !== undefined,
      trust,
    });
  } catch (error) {
    if (str('log-key') && error instanceof NoteError) throw new ConfigError(`--log-key ${str('log-key')}: ${error.message}`);
    throw error;
  }
}

/** `--at TIME`: an ISO 8601 timestamp with Z or an offset, as `--now` of a build takes. */
function atOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const t = parseTimestamp(value);
  if (t === null) throw new UsageError(`--at "${value}": must be an ISO 8601 timestamp with Z or an offset, e.g. 2026-12-01T00:00:00Z`);
  return t;
}
