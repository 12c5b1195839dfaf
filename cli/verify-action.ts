import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type AnswerSource, gatewaySource, KEY_SET_PATH, LOG_KEY_PATH, trustedKeySet, verifyOnline } from '@merchant-verify/verifier';
import { NoteError } from '#shared';
import { isUrl, readFileOrUrl } from '../clients/file-or-url.ts';
import { ConfigError } from '../core/errors/errors.ts';
import { normalizeDomain } from '../core/rules/domain.ts';
import { trustJson } from '../presentation/trust-report.ts';
import { readTrustedKeys } from './trust-options.ts';
import { type Outcome, present } from './verify-output.ts';
import { trustedCheckpointOf, witnessOptionsOf } from './witness-policy.ts';

// `mvr verify`'s work, loaded by the command once its flags are read (cli/commands/verify.ts): the
// flags say what is read from files and where the rest is fetched from; the verifier package's
// online client (verifyOnline) fetches, retries and verifies.

/** Verifies as the flags say; `gateway` is the resolved --base-url and --api-key. */
export async function verifyFromArgs(args: Record<string, unknown>, gateway: { baseUrl?: string; apiKey?: string }): Promise<Outcome> {
  const str = (k: string) => (typeof args[k] === 'string' && args[k] !== '' ? (args[k] as string) : undefined);
  const { baseUrl, apiKey } = gateway;
  const domain = str('domain') ? normalizeDomain(str('domain')) : undefined;
  const [file, absenceFile, proofFile, logKey] = [str('file'), str('absence'), str('proof'), str('log-key')];
  const { keys, flag: keysFlag } = keySetFlagOf(args);
  // An answer about a named kept build is about the past: it need not be the newest build's (that build's only).
  const build = str('build');
  const witness = await witnessOptionsOf(args);
  // With --trusted-keys, a key set's keys count only when pinned or endorsed by a pinned key, link by link.
  const trusted = str('trusted-keys') ? await readTrustedKeys(str('trusted-keys')!) : undefined;
  const pinned = (keySet: unknown): unknown => (trusted === undefined ? keySet : trustedKeySet(keySet, trusted).keySet);
  let source: string;
  if (absenceFile && !file) {
    // A saved proof alone: DOMAIN was never audited in the proof's build, or not.
    if (!domain) throw new ConfigError('--absence: give the DOMAIN the proof is about');
    source = absenceFile;
  } else if (file) source = file;
  else {
    if (!domain) throw new ConfigError('give a DOMAIN to look up, or --file PATH to verify a saved record');
    if (!baseUrl) throw new ConfigError('--base-url (or MVR_BASE_URL) is required to fetch a record');
    if (!apiKey) throw new ConfigError('--api-key (or MVR_API_KEY) is required to fetch a record');
    source = `${baseUrl.replace(/\/+$/, '')}/v1/verify?domain=${encodeURIComponent(domain)}`;
  }
  const keySetUrl = keys !== undefined && isUrl(keys) ? keys : undefined;
  if (keys === undefined && !baseUrl) throw new ConfigError('--key-set FILE_OR_URL (or --base-url) is required to verify');
  const where = baseUrl ?? keySetUrl;
  const fetched: Partial<AnswerSource> =
    where === undefined ? {} : gatewaySource({ baseUrl: where, apiKey, keySetUrl, ...(build === undefined ? {} : { build }) });
  // What is not read from a file is fetched from the gateway, when one is given; what is needed
  // and neither given nor fetchable is named with its flags.
  const sources: Partial<AnswerSource> = {
    keySet: fetched.keySet && (async () => pinned(await fetched.keySet!())),
    ...(baseUrl && apiKey
      ? { answer: fetched.answer, absence: fetched.absence, proof: fetched.proof, bundle: fetched.bundle }
      : {
          proof: () => Promise.reject(new ConfigError('--log needs --proof FILE, or --base-url and --api-key to fetch the proof')),
        }),
    logKey: baseUrl
      ? fetched.logKey
      : () => Promise.reject(new ConfigError("--log needs --log-key FILE_OR_URL (the log's verifier key), or --base-url")),
  };
  // A saved absence proof stands for the never-audited answer: no answer is fetched beside it.
  if (absenceFile && !file) delete sources.answer;
  const verification = await namingLogKey(logKey, async () =>
    verifyOnline({
      domain,
      source: sources,
      answer: file === undefined ? undefined : await jsonFile(file, `--file ${file}`),
      absence: absenceFile === undefined ? undefined : await jsonFile(absenceFile, `the absence proof ${absenceFile}`, true),
      proof: proofFile === undefined ? undefined : (await readFileOrUrl(proofFile)).toString('utf8'),
      keySet:
        keys === undefined || keySetUrl ? undefined : pinned(await jsonFile(await keySetPathOf(keys, keysFlag), `${keysFlag} ${keys}`)),
      vkey: logKey === undefined ? undefined : (await readFileOrUrl(logKey)).toString('utf8'),
      // A log key or a proof given is a log check asked for: it is run, never silently left out.
      log: Boolean(args.log) || logKey !== undefined || proofFile !== undefined,
      ...witness,
      ...(await trustedCheckpointOf(args)),
      ...(build === undefined ? {} : { asOfBuild: build }),
    }),
  );
  const trust = trustJson(verification.trust, {
    keySet: keys ?? `${where!.replace(/\/+$/, '')}${KEY_SET_PATH}`,
    pinnedKeys: trusted !== undefined,
    logKey: { given: logKey, policy: str('policy'), fetched: baseUrl && `${baseUrl.replace(/\/+$/, '')}${LOG_KEY_PATH}` },
  });
  return present(verification, source, { policy: witness !== undefined, trust });
}

/** A log key that is no note verifier key is a misuse of --log-key, named as such. */
export async function namingLogKey<T>(vkeySource: string | undefined, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (vkeySource !== undefined && error instanceof NoteError) throw new ConfigError(`--log-key ${vkeySource}: ${error.message}`);
    throw error;
  }
}

/** A JSON file a flag names (or, `orUrl`, a URL: one that cannot be fetched is FETCH_FAILED); one that cannot be read or parsed is named. */
export async function jsonFile(path: string, named: string, orUrl = false): Promise<unknown> {
  const bytes = orUrl
    ? await readFileOrUrl(path)
    : await readFile(path).catch((error: Error) => Promise.reject(new ConfigError(`${named}: ${error.message}`)));
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new ConfigError(`${named}: ${(error as Error).message}`);
  }
}

/**
 * `mvr verify`'s key set flag: its value and the name it was typed under (`--key-set`, or its
 * alias `--keys`), which messages repeat.
 */
export function keySetFlagOf(args: Record<string, unknown>): { keys: string | undefined; flag: string } {
  const value = args['key-set'];
  return { keys: typeof value === 'string' && value !== '' ? value : undefined, flag: args.keys !== undefined ? '--keys' : '--key-set' };
}

/** `--key-set` (typed as `flag`) names the key set file, or a public folder: then the key set it serves at its well-known path. */
export async function keySetPathOf(keys: string, flag = '--key-set'): Promise<string> {
  if (!(await stat(keys).catch(() => null))?.isDirectory()) return keys;
  const inFolder = join(keys, KEY_SET_PATH);
  if (await stat(inFolder).catch(() => null)) return inFolder;
  throw new ConfigError(
    `${flag} ${keys} is a folder without ${KEY_SET_PATH.slice(1)}: ${flag} is the key set, a file or URL, or the public folder that holds it`,
  );
}
