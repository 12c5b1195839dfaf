/**
 * One private online verification: the domain is hashed here, the gateway is asked for a prefix
 * of its hash only (`GET /v1/lookup/{prefix}`), and the answer is verified with
 * {@link verifyPrefixAnswer}. Key set and log key are fetched as {@link verifyOnline} fetches them.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { FetchFailedError, hexPrefix, prefixLengthFor } from '#shared';
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
 * Fetches the answer for the domain's prefix and verifies it. The build's prefix length is read
 * from the live statement first (`GET /v1/lookup`, where the source offers it) and exactly that
 * many hex digits are sent, once: a refusal is FETCH_FAILED, never a cue to send more, since a
 * gateway refusing every prefix would otherwise draw out the whole hash. A length longer than the
 * statement's size allows is not sent either. Only a source with no statement (an in-process
 * lookup on the server that already heard the domain) is asked with one digit and one more after
 * each refusal. A fetched answer refused as BUILD_SUPERSEDED (a build went live while it was read)
 * is asked for once more, after reading the newer statement. Throws FETCH_FAILED when something
 * needed cannot be fetched.
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

/**
 * The prefix length the live statement signs, read before any prefix is sent; undefined when the
 * source offers no statement. FETCH_FAILED when the statement gives none, or one longer than its
 * build's size allows ({@link prefixLengthFor}): no more of the hash is sent than every build of
 * that size would send.
 */
async function signedLength(source: Partial<AnswerSource>): Promise<number | undefined> {
  if (!source.lookupStatement) return undefined;
  const head = (await source.lookupStatement()) as {
    statement?: { lookup?: { prefix_length?: unknown }; domain_map?: { size?: unknown } };
  };
  const length = head?.statement?.lookup?.prefix_length;
  const size = head?.statement?.domain_map?.size;
  if (!Number.isSafeInteger(length) || !Number.isSafeInteger(size) || (length as number) < 1)
    throw new FetchFailedError("the gateway's lookup statement gives no prefix length (lookup.prefix_length) and map size");
  if ((length as number) > prefixLengthFor(size as number))
    throw new FetchFailedError(
      `the gateway's statement asks for ${length} hex digits, but a build of ${size} domains has ${prefixLengthFor(size as number)}: nothing was sent`,
    );
  return length as number;
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
  const signed = answer === undefined ? await signedLength(source) : undefined;
  if (signed !== undefined) {
    prefix = hexPrefix(hash, signed);
    answer = (await source.prefix?.(prefix)) ?? undefined;
    if (answer === undefined)
      throw new FetchFailedError(`the gateway refused prefix ${prefix}, of the length its own statement signs: no longer prefix is sent`);
  }
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
