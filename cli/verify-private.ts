import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { type PrefixVerification, trustedKeySet, verifyPrefixAnswer } from '@merchant-verify/verifier';
import { isUrl, readFileOrUrl } from '../clients/file-or-url.ts';
import { getFromGateway } from '../clients/gateway-client.ts';
import { FetchFailedError, KeySetClient, keySetForSigned } from '../clients/key-set-client.ts';
import { normalizeDomain } from '../core/domain.ts';
import { ConfigError, exitCodeOf } from '../core/errors.ts';
import { LOG_VKEY_PATH } from '../core/layout.ts';
import { readTrustedKeys } from './trust-options.ts';
import { type Outcome, present } from './verify-output.ts';
import { witnessOptionsOf } from './witness-policy.ts';

// `mvr verify DOMAIN --private`: the gateway is asked for a prefix of the domain's hash, never the domain.

/** The longest prefix a client tries before giving up (a build of 16^8 × 256 domains is far past any). */
const MAX_PREFIX_LENGTH = 8;

/** Verifies DOMAIN through a prefix lookup; `gateway` is the resolved --base-url and --api-key. */
export async function verifyPrivately(args: Record<string, unknown>, gateway: { baseUrl?: string; apiKey?: string }): Promise<Outcome> {
  const str = (k: string) => (typeof args[k] === 'string' && args[k] !== '' ? (args[k] as string) : undefined);
  const { baseUrl, apiKey } = gateway;
  if (!str('domain')) throw new ConfigError('--private: give the DOMAIN to look up');
  for (const flag of ['file', 'absence', 'proof'])
    if (str(flag)) throw new ConfigError(`--private looks the domain up by its hash prefix; --${flag} verifies a saved answer instead`);
  if (!baseUrl || !apiKey) throw new ConfigError('--private needs --base-url and --api-key (or MVR_BASE_URL and MVR_API_KEY)');
  // Normalized and hashed here, with the function the gateway and the build use.
  const domain = normalizeDomain(str('domain'));
  const hash = createHash('sha256').update(domain).digest('hex');
  const { prefix, answer } = await fetchPrefixAnswer(baseUrl, apiKey, hash);
  const witness = await witnessOptionsOf(args);
  const log = args.log || witness !== undefined ? { vkey: await readLogKey(str('log-key'), baseUrl) } : undefined;
  const keySet = await keySetOf(str('keys'), str('trusted-keys'), baseUrl, (answer as { statement?: unknown } | null)?.statement);
  const verdict = verifyPrefixAnswer({ domain, answer, keySet, ...(log ? { log } : {}), ...witness });
  const source = `${baseUrl.replace(/\/+$/, '')}/v1/lookup/${prefix}`;
  return outcomeOf(verdict, domain, source, witness !== undefined);
}

/**
 * The answer for the domain's prefix. The build's prefix length is in its statement; a client that
 * does not know it asks with one digit and one more after each INVALID_PREFIX: every prefix it sends
 * is a part of the one it ends with, so the gateway learns nothing more than that one.
 */
async function fetchPrefixAnswer(baseUrl: string, apiKey: string, hash: string): Promise<{ prefix: string; answer: unknown }> {
  for (let length = 1; length <= MAX_PREFIX_LENGTH; length++) {
    const prefix = hash.slice(0, length);
    const reply = await getFromGateway(baseUrl, apiKey, `/v1/lookup/${prefix}`);
    if (!reply.ok && reply.code === 'INVALID_PREFIX') continue;
    if (!reply.ok) throw new FetchFailedError(`the gateway answered ${reply.status} ${reply.code ?? ''}: ${reply.detail}`, reply.status);
    let answer: unknown;
    try {
      answer = JSON.parse(reply.bytes.toString('utf8'));
    } catch {
      throw new FetchFailedError('the gateway answered 200 with a body that is not JSON');
    }
    return { prefix, answer };
  }
  throw new FetchFailedError(`the gateway refused every prefix up to ${MAX_PREFIX_LENGTH} hex digits (INVALID_PREFIX)`);
}

/** The key set: --keys (a file or URL), else the gateway's; with --trusted-keys, only the keys trusted. */
async function keySetOf(keys: string | undefined, trustedFile: string | undefined, baseUrl: string, statement: unknown): Promise<unknown> {
  const trusted = trustedFile ? await readTrustedKeys(trustedFile) : undefined;
  if (keys !== undefined && !isUrl(keys)) {
    const keySet: unknown = JSON.parse(
      await readFile(keys, 'utf8').catch((error: Error) => Promise.reject(new ConfigError(`--keys ${keys}: ${error.message}`))),
    );
    return trusted ? trustedKeySet(keySet, trusted).keySet : keySet;
  }
  return keySetForSigned(new KeySetClient({ url: keys ?? baseUrl, trustedKeys: trusted }), statement);
}

async function readLogKey(source: string | undefined, baseUrl: string): Promise<string> {
  return (await readFileOrUrl(source ?? new URL(LOG_VKEY_PATH, baseUrl).href)).toString('utf8');
}

/** What `mvr verify --private` prints: the pipeline's verdict as `mvr verify` shows it, or why the prefix answer did not hold. */
function outcomeOf(v: PrefixVerification, domain: string, source: string, policy: boolean): Outcome {
  if (v.verification && v.code === v.verification.code) {
    const shown = present(v.verification, source, policy);
    return { ...shown, json: { ...shown.json, private: true } };
  }
  const code = v.code ?? 'INCOMPLETE_PREFIX_ANSWER';
  return {
    json: { domain, valid: false, code, message: v.message, source, private: true },
    text: `${domain}: NOT VERIFIED (${code}) ${v.message ?? ''}\n  source: ${source}\n`,
    exitCode: exitCodeOf(code),
  };
}
