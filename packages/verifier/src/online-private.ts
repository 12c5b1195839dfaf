/**
 * One private online verification: the domain is hashed here, the gateway is asked for a prefix
 * of its hash only (`GET /v1/lookup/{prefix}`), and the answer is verified with
 * {@link verifyPrefixAnswer}. Key set and log key are fetched as {@link verifyOnline} fetches them.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { FetchFailedError, hexPrefix } from '#shared';
import type { AnswerSource } from './gateway-source.ts';
import { keySetOf, logKeyOf, type OnlineInput, type OnlineTrust } from './online.ts';
import { type PrefixVerification, verifyPrefixAnswer } from './verify-prefix.ts';

/** The longest prefix asked before giving up: a build would need 16^8 × 256 domains to use more. */
const MAX_PREFIX_LENGTH = 8;

export interface PrivateOnlineInput
  extends Pick<OnlineInput, 'keySet' | 'vkey' | 'log' | 'policy' | 'maxAgeMs' | 'now' | 'trustedCheckpoint'> {
  /** The normalized domain (`normalizeDomain` of the service): only a prefix of its SHA-256 is sent. */
  domain: string;
  /** Where to fetch the prefix answer, the key set and the log's key (`gatewaySource`). */
  source?: Partial<AnswerSource>;
  /** A saved prefix answer, checked instead of fetching one. */
  answer?: unknown;
}

/**
 * Fetches the answer for the domain's prefix and verifies it. The build's prefix length is in the
 * answer's statement; not knowing it, this asks with one hex digit and one more after each refusal
 * (INVALID_PREFIX): every prefix sent is part of the last, so the gateway learns no more than that
 * one. A fetched answer refused as BUILD_SUPERSEDED (a build went live while it was read) is asked
 * for once more, with the same prefix. Throws FETCH_FAILED when something needed cannot be fetched.
 *
 * @example
 *   const v = await verifyOnlinePrivately({ domain: 'shop.example', source: gatewaySource({ baseUrl, apiKey }) });
 *   if (v.code === null) console.log('verified', v.prefix);
 */
export async function verifyOnlinePrivately(
  input: PrivateOnlineInput,
): Promise<PrefixVerification & { prefix: string | null; trust: OnlineTrust }> {
  const first = await verifyPrivatelyOnce(input, input.answer);
  if (first.code !== 'BUILD_SUPERSEDED' || input.answer !== undefined || first.prefix === null || !input.source?.prefix) return first;
  return verifyPrivatelyOnce(input, undefined, first.prefix.length);
}

/** One look: the answer given, or fetched (from `fromLength` hex digits, one more after each refusal), verified. */
async function verifyPrivatelyOnce(
  input: PrivateOnlineInput,
  given: unknown,
  fromLength = 1,
): Promise<PrefixVerification & { prefix: string | null; trust: OnlineTrust }> {
  const source = input.source ?? {};
  const hash = sha256(new TextEncoder().encode(input.domain));
  let answer = given;
  let prefix: string | null = null;
  for (let length = fromLength; answer === undefined; length++) {
    if (!source.prefix) throw new FetchFailedError('no prefix answer given, and nowhere to fetch one from');
    if (length > MAX_PREFIX_LENGTH) throw new FetchFailedError(`the gateway refused every prefix up to ${MAX_PREFIX_LENGTH} hex digits`);
    prefix = hexPrefix(hash, length);
    answer = (await source.prefix(prefix)) ?? undefined;
  }
  const keySet = await keySetOf(input.keySet, source)((answer as { statement?: unknown } | null)?.statement);
  const withLog = input.log === true || input.policy !== undefined || input.trustedCheckpoint !== undefined;
  const logKey = withLog ? await logKeyOf(input, source) : undefined;
  const vkey = logKey?.vkey;
  const verdict = verifyPrefixAnswer({
    domain: input.domain,
    answer,
    keySet,
    ...(vkey === undefined ? {} : { log: { vkey } }),
    ...(input.policy === undefined ? {} : { policy: input.policy }),
    ...(input.maxAgeMs === undefined ? {} : { maxAgeMs: input.maxAgeMs }),
    ...(input.now === undefined ? {} : { now: input.now }),
    ...(input.trustedCheckpoint === undefined ? {} : { trustedCheckpoint: input.trustedCheckpoint }),
  });
  return { ...verdict, prefix, trust: { keySet: input.keySet === undefined ? 'source' : 'given', logKey: logKey?.from ?? null } };
}
