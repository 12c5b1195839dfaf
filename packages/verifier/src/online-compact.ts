/**
 * One compact private verification online: the live statement is fetched first (`GET /v1/lookup`),
 * the bucket of the statement's bits is asked for, once (`GET /v1/lookup/{bits}/{hex}`), and the
 * answer is verified against that statement with {@link verifyCompactAnswer}. Key set and log key
 * are fetched as {@link verifyOnline} fetches them.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bucketBitsFor, bucketHex, bucketOf, FetchFailedError } from '#shared';
import type { AnswerSource } from './gateway-source.ts';
import { keySetOf, logKeyOf, type OnlineInput, type OnlineTrust } from './online.ts';
import { type CompactVerification, verifyCompactAnswer } from './verify-compact.ts';

export interface PrivateOnlineInput
  extends Pick<OnlineInput, 'keySet' | 'vkey' | 'log' | 'policy' | 'maxAgeMs' | 'now' | 'trustedCheckpoint'> {
  /** The normalized domain (`normalizeDomain` of the service): only a few bits of its SHA-256 are sent. */
  domain: string;
  /** Where to fetch the statement, the compact answer, the key set and the log's key (`gatewaySource`). */
  source?: Partial<AnswerSource>;
}

/**
 * Fetches the live statement, then the compact answer for the domain's bucket of the bits it
 * signs, and verifies it: the domain's entry proven its build's, or its absence proven. The bits
 * are sent once, as the statement gives them: a refusal is FETCH_FAILED, never a cue to send more,
 * and a statement asking for more bits than its map's size gives is not followed (nothing is
 * sent). An answer that does not fit the statement read before it (another map root, or another build's
 * size or shape), or a statement superseded in the log (a build went live while it read), is looked at once
 * more from the statement read again. Throws FETCH_FAILED when something
 * needed cannot be fetched.
 *
 * @example
 *   const v = await verifyOnlineCompact({ domain: 'shop.example', source: gatewaySource({ baseUrl, apiKey }) });
 *   if (v.code === null) console.log(v.entry.status, v.entry.record_hash);
 */
export async function verifyOnlineCompact(
  input: PrivateOnlineInput,
): Promise<CompactVerification & { bucket: string | null; trust: OnlineTrust }> {
  const source = input.source ?? {};
  if (!source.lookupStatement || !source.compact) throw new FetchFailedError('no lookup statement or compact answer to fetch');
  const { root: firstRoot, ...first } = await verifyCompactOnce(input, source.lookupStatement, source.compact);
  if (first.code === null || !ANOTHER_BUILD_MAY_SAY.has(first.code)) return first;
  // A build that went live between the statement and the answer (the answer is the newer build's: another root,
  // and another size when the build's bucket size changed), or while the statement was read (a later one is
  // logged): asked once more, from the statement read again
  // (whose bits the rule bounds as before), never from the answer; the second look counts only if it read another build.
  const { root, ...again } = await verifyCompactOnce(input, source.lookupStatement, source.compact);
  return root === firstRoot ? first : again;
}

/**
 * The failures an answer of the build after the statement's gives (checked in this order: its size, its shape,
 * its root), and a superseded statement's: a second look decides, and its verdict counts only if it read another
 * build, so a gateway that fails the same statement twice still gets its first refusal.
 */
const ANOTHER_BUILD_MAY_SAY = new Set(['PADDING_MISMATCH', 'MALFORMED_PREFIX_ANSWER', 'PREFIX_MISMATCH', 'BUILD_SUPERSEDED']);

/** One look: the statement, then its bucket, verified; `root` is the statement's map root, to tell whether a second look read another build. */
async function verifyCompactOnce(
  input: PrivateOnlineInput,
  lookupStatement: () => Promise<unknown>,
  compact: (bits: number, hex: string) => Promise<Uint8Array>,
): Promise<CompactVerification & { bucket: string | null; trust: OnlineTrust; root: unknown }> {
  const source = input.source ?? {};
  const head = (await lookupStatement()) as { statement?: unknown; statement_proof?: unknown } | null;
  const statement = head?.statement as { lookup?: { bits?: unknown }; domain_map?: { size?: unknown; root?: unknown } } | undefined;
  const bits = statement?.lookup?.bits;
  const size = statement?.domain_map?.size;
  if (!Number.isSafeInteger(bits) || !Number.isSafeInteger(size) || (bits as number) < 1)
    throw new FetchFailedError("the gateway's lookup statement gives no bucket bits (lookup.bits) and map size");
  if ((bits as number) > bucketBitsFor(size as number))
    throw new FetchFailedError(
      `the gateway's statement asks for ${bits} bits, but a build of ${size} domains has ${bucketBitsFor(size as number)}: nothing was sent`,
    );
  const hex = bucketHex(bucketOf(sha256(new TextEncoder().encode(input.domain)), bits as number), bits as number);
  const answer = await compact(bits as number, hex);
  const keySet = await keySetOf(input.keySet, source)(statement);
  const withLog = input.log === true || input.policy !== undefined || input.trustedCheckpoint !== undefined;
  const logKey = withLog ? await logKeyOf(input, source) : undefined;
  const verdict = verifyCompactAnswer({
    domain: input.domain,
    answer,
    statement,
    ...(head?.statement_proof === undefined ? {} : { statementProof: head.statement_proof }),
    keySet,
    ...(logKey === undefined ? {} : { log: { vkey: logKey.vkey } }),
    ...(input.policy === undefined ? {} : { policy: input.policy }),
    ...(input.maxAgeMs === undefined ? {} : { maxAgeMs: input.maxAgeMs }),
    ...(input.now === undefined ? {} : { now: input.now }),
    ...(input.trustedCheckpoint === undefined ? {} : { trustedCheckpoint: input.trustedCheckpoint }),
  });
  return {
    ...verdict,
    bucket: `${bits}/${hex}`,
    root: statement?.domain_map?.root,
    trust: { keySet: input.keySet === undefined ? 'source' : 'given', logKey: logKey?.from ?? null },
  };
}
