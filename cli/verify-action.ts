import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isNeverAudited, KEY_SET_PATH, MvrError, type TlogPolicy, trustedKeySet, verifyAnswer } from '@merchant-verify/verifier';
import { formatVerifierKey, NoteError } from '@merchant-verify/verifier/internal/tlog';
import { isUrl, readFileOrUrl } from '../clients/file-or-url.ts';
import { fetchRecordFromGateway, getFromGateway } from '../clients/gateway-client.ts';
import { FetchFailedError, KeySetClient, keySetForSigned } from '../clients/key-set-client.ts';
import { normalizeDomain } from '../core/domain.ts';
import { ConfigError, NotInLogError } from '../core/errors.ts';
import { LOG_VKEY_PATH } from '../core/layout.ts';
import { readTrustedKeys } from './trust-options.ts';
import { type Outcome, present } from './verify-output.ts';
import { witnessOptionsOf } from './witness-policy.ts';

// `mvr verify`'s work, loaded by the command once its flags are read (cli/commands/verify.ts).

/** Verifies as the flags say; `gateway` is the resolved --base-url and --api-key. */
export async function verifyFromArgs(args: Record<string, unknown>, gateway: { baseUrl?: string; apiKey?: string }): Promise<Outcome> {
  const str = (k: string) => (typeof args[k] === 'string' && args[k] !== '' ? (args[k] as string) : undefined);
  const { baseUrl, apiKey } = gateway;
  const domain = str('domain') ? normalizeDomain(str('domain')) : undefined;
  const keysArg = str('keys');
  const trusted = str('trusted-keys') ? await readTrustedKeys(str('trusted-keys')!) : undefined;
  // A policy is checked on the log proof's checkpoint: --policy asks for the log proof (--log).
  const witness = await witnessOptionsOf(args);
  const withLog = Boolean(args.log) || witness !== undefined;
  // undefined: a saved absence proof alone, for the never-audited answer it stands for.
  let readRecord: () => Promise<unknown>;
  let source: string;
  if (str('absence') && !str('file')) {
    // A saved proof alone: DOMAIN was never audited in the proof's build, or not.
    if (!domain) throw new ConfigError('--absence: give the DOMAIN the proof is about');
    source = str('absence')!;
    readRecord = async () => undefined;
  } else if (str('file')) {
    source = str('file')!;
    readRecord = async () => {
      try {
        return JSON.parse(await readFile(source, 'utf8'));
      } catch (error) {
        throw new ConfigError(`--file ${source}: ${(error as Error).message}`);
      }
    };
  } else {
    if (!domain) throw new ConfigError('give a DOMAIN to look up, or --file PATH to verify a saved record');
    if (!baseUrl) throw new ConfigError('--base-url (or MVR_BASE_URL) is required to fetch a record');
    if (!apiKey) throw new ConfigError('--api-key (or MVR_API_KEY) is required to fetch a record');
    source = `${baseUrl.replace(/\/+$/, '')}/v1/verify?domain=${encodeURIComponent(domain)}`;
    readRecord = () => fetchRecord(baseUrl, apiKey, domain);
  }

  const keySetFile = async (): Promise<unknown> => {
    try {
      const keySet: unknown = JSON.parse(await readFile(await keySetPathOf(keysArg!), 'utf8'));
      // With --trusted-keys, the keys the file lists count only when trusted (pinned or endorsed).
      return trusted ? trustedKeySet(keySet, trusted).keySet : keySet;
    } catch (error) {
      if (error instanceof MvrError && error.code === 'INVALID_KEY_SET') throw error;
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(`--keys ${keysArg}: ${(error as Error).message}`);
    }
  };
  const keySetClient = () => {
    const url = keysArg ?? baseUrl;
    if (!url) throw new ConfigError('--keys FILE_OR_URL (or --base-url) is required to verify');
    return new KeySetClient({ url, trustedKeys: trusted });
  };
  const fromFile = keysArg !== undefined && !isUrl(keysArg);
  // An unusable key set is INVALID_KEY_SET (exit 3) whether it came from a file or a URL. From a
  // URL, the set must list the key that signed what is checked: the proof's statement or the record.
  const keySetFor = async (signed: unknown): Promise<unknown> => (fromFile ? keySetFile() : keySetForSigned(keySetClient(), signed));
  /** A never-audited answer holds only with a valid absence proof: saved (--absence) or the gateway's. */
  const absenceOf = async (asked: string): Promise<{ proof: unknown } | { unavailable: string }> => {
    if (!str('absence') && !(baseUrl && apiKey))
      return { unavailable: 'no absence proof to check: give --absence FILE, or --base-url and --api-key to fetch it' };
    const proof = await readAbsenceProof(str('absence'), baseUrl, apiKey, asked);
    if (proof === HAS_RECORD)
      return { unavailable: `the gateway says ${asked} has a record in its live build: this "unverified" answer is not the build's` };
    return { proof };
  };

  for (let attempt = 1; ; attempt++) {
    const answer = await readRecord();
    const asked = domain ?? (answer as { domain?: unknown } | null)?.domain;
    const neverAudited = answer === undefined || (isNeverAudited(answer) && typeof asked === 'string');
    const absence = neverAudited ? await absenceOf(asked as string) : undefined;
    const keySet = await keySetFor(absence && 'proof' in absence ? (absence.proof as { statement?: unknown } | null)?.statement : answer);
    // A never-audited answer has no entry in the log: its absence proof decides, and with --log its
    // build statement must be in the log (its statement_proof, checked with the log's key).
    const log = !withLog
      ? undefined
      : neverAudited
        ? await readLogKey(str, baseUrl, witness?.policy)
        : await readLog(str, baseUrl, apiKey, asked, witness?.policy);
    const verification = verifyLogKey(log?.source, () => verifyAnswer({ answer, keySet, domain, absence, log, ...witness }));
    // Record and proof from the gateway are two requests: a build that went live between them
    // gives the new record's proof. Both are looked up once more before saying NOT_INCLUDED.
    const bothFetched = !str('file') && !str('proof');
    if (bothFetched && attempt === 1 && verification.log?.valid === false && verification.log.code === 'NOT_INCLUDED') continue;
    return present(verification, source, witness !== undefined);
  }
}

/** A log key that is no note verifier key is a misuse of --log-key, named as such. */
function verifyLogKey<T>(vkeySource: string | undefined, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (vkeySource !== undefined && error instanceof NoteError) throw new ConfigError(`--log-key ${vkeySource}: ${error.message}`);
    throw error;
  }
}

/** `--keys` names the key set file, or a public folder: then the key set it serves at its well-known path. */
async function keySetPathOf(keys: string): Promise<string> {
  if (!(await stat(keys).catch(() => null))?.isDirectory()) return keys;
  const inFolder = join(keys, KEY_SET_PATH);
  if (await stat(inFolder).catch(() => null)) return inFolder;
  throw new ConfigError(
    `--keys ${keys} is a folder without ${KEY_SET_PATH.slice(1)}: here --keys is the key set, a file or URL, or the public folder that holds it`,
  );
}

/** `--log`: the record's tlog-proof (a file, or the gateway's) and the log's verifier key it is checked against. */
async function readLog(
  str: (k: string) => string | undefined,
  baseUrl: string | undefined,
  apiKey: string | undefined,
  domain: unknown,
  policy?: TlogPolicy,
): Promise<{ proof: string; vkey: string; source: string }> {
  let proof: string;
  if (str('proof')) {
    proof = (await readFileOrUrl(str('proof')!)).toString('utf8');
  } else {
    if (!baseUrl || !apiKey) throw new ConfigError('--log needs --proof FILE, or --base-url and --api-key to fetch the proof');
    if (typeof domain !== 'string') throw new ConfigError('--log: the record names no domain to fetch the proof of');
    const answer = await getFromGateway(baseUrl, apiKey, `/v1/proof?domain=${encodeURIComponent(domain)}`);
    // The gateway's word that the record is not in the log (a build made without a log key) is a verdict, not a failed fetch.
    if (!answer.ok && answer.code === 'NOT_IN_LOG') throw new NotInLogError(`the gateway has no log proof of ${domain}: ${answer.detail}`);
    if (!answer.ok)
      throw new FetchFailedError(
        `the gateway answered ${answer.status} ${answer.code ?? ''} for the log proof: ${answer.detail}`,
        answer.status,
      );
    proof = answer.bytes.toString('utf8');
  }
  return { proof, ...(await readLogKey(str, baseUrl, policy)) };
}

/**
 * The log's verifier key, and where it was read: `--log-key`; else the one log a `--policy` names
 * (the verifier's own trust, before the word of the gateway being checked); else the gateway's.
 */
async function readLogKey(
  str: (k: string) => string | undefined,
  baseUrl: string | undefined,
  policy?: TlogPolicy,
): Promise<{ vkey: string; source: string }> {
  const fromPolicy = !str('log-key') && policy?.logs.length === 1 ? policy.logs[0]!.vkey : undefined;
  if (fromPolicy) return { vkey: formatVerifierKey(fromPolicy), source: `the log line of --policy ${str('policy')}` };
  const source = str('log-key') ?? (baseUrl ? new URL(LOG_VKEY_PATH, baseUrl).href : undefined);
  if (!source) throw new ConfigError("--log needs --log-key FILE_OR_URL (the log's verifier key), or --base-url");
  return { vkey: (await readFileOrUrl(source)).toString('utf8'), source };
}

/** The record from the gateway; any answer but 200 is a fetch failure naming the gateway's problem code. */
async function fetchRecord(baseUrl: string, apiKey: string, domain: string): Promise<unknown> {
  const answer = await fetchRecordFromGateway(baseUrl, apiKey, domain);
  if (!answer.ok) throw new FetchFailedError(`the gateway answered ${answer.status} ${answer.code ?? ''}: ${answer.detail}`, answer.status);
  try {
    return JSON.parse(answer.bytes.toString('utf8'));
  } catch {
    throw new FetchFailedError('the gateway answered 200 with a body that is not JSON');
  }
}

/** What the gateway answers for the absence of a domain that has a record: no proof, and a verdict. */
const HAS_RECORD = Symbol('HAS_RECORD');

/** The absence proof of a domain: a saved file, or `GET /v1/absence` of the gateway. */
async function readAbsenceProof(
  file: string | undefined,
  baseUrl: string | undefined,
  apiKey: string | undefined,
  domain: string,
): Promise<unknown | typeof HAS_RECORD> {
  let bytes: Buffer;
  if (file) {
    bytes = await readFileOrUrl(file);
  } else {
    if (!baseUrl || !apiKey)
      throw new ConfigError(
        'a never-audited record is checked against its absence proof: give --absence FILE, or --base-url and --api-key to fetch it',
      );
    const answer = await getFromGateway(baseUrl, apiKey, `/v1/absence?domain=${encodeURIComponent(domain)}`);
    if (!answer.ok && answer.code === 'HAS_RECORD') return HAS_RECORD;
    if (!answer.ok)
      throw new FetchFailedError(
        `the gateway answered ${answer.status} ${answer.code ?? ''} for the absence proof: ${answer.detail}`,
        answer.status,
      );
    bytes = answer.bytes;
  }
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ConfigError(`the absence proof from ${file ?? baseUrl} is not JSON`);
  }
}
