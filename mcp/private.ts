import { type TlogPolicy, verifyOnlineCompact } from '@merchant-verify/verifier';
import { isMvrError, MvrError, NotInLogError } from '../core/errors/errors.ts';
import { normalizeDomain } from '../core/rules/domain.ts';
import { defaultSchemaUrl, unverifiedRecord } from '../core/rules/record.ts';
import { entryVerificationJson, statementFailureJson } from '../presentation/entry-json.ts';
import { type TrustSources, trustJson } from '../presentation/trust-report.ts';
import { verificationJson } from '../presentation/verification-json.ts';
import type { VerifiedAnswer } from './verification.ts';

// verify_merchant and verify_merchants in their private form (the default over a remote gateway):
// the live statement first (`GET /v1/lookup`), then the compact answer of the domain's bucket
// (`GET /v1/lookup/{bits}/{hex}` of a remote gateway, or the same bytes read in-process), verified
// by the package's verifyOnlineCompact, so the lookup itself names a bucket of the domain's hash, never the domain.

/** A compact answer's bytes for a bucket of the live build, as `GET /v1/lookup/{bits}/{hex}` gives them; throws MvrError. */
export type CompactLookup = (bits: number, hex: string) => Promise<Uint8Array>;

/** The verification settings of one tool call. */
export interface PrivateSettings {
  withLog: boolean;
  policy?: TlogPolicy;
  maxAgeMs?: number;
  now?: number;
}

/** What the private path verifies with: the live statement, the compact answers, the key set and the log's key. */
export interface PrivateLookups {
  compact: CompactLookup;
  /** The live statement (`GET /v1/lookup`): the bucket's bits are read there and sent once. */
  lookupStatement: () => Promise<unknown>;
  keySet: () => Promise<unknown>;
  vkey: () => Promise<string | null>;
  /** Where the key set and the log key come from, for the answer's `trust`. */
  trust: TrustSources;
}

/**
 * Verifies a normalized domain through its bucket's compact answer. A proven absence is the plain
 * lookup's verdict (NEVER_AUDITED, with the never-audited record made as a gateway makes it); a
 * proven entry is its verdict (status, tier, score, next audit and the record's hash, under
 * `entry`), with `record: null`, since the record itself was not fetched. Its log step is the build
 * statement's entry in the log (the record's own log proof would name the domain). An answer that
 * does not hold is thrown as its coded error (MALFORMED_PREFIX_ANSWER, PREFIX_MISMATCH,
 * PADDING_MISMATCH, INCOMPLETE_PREFIX_ANSWER, PREFIX_TOO_LONG, or the statement's).
 */
export async function verifyPrivately(
  domain: string,
  lookups: PrivateLookups,
  options: PrivateSettings,
): Promise<VerifiedAnswer & { bucket: string | null }> {
  // The issuer of the live statement (signed, once the verdict holds).
  let issuer: unknown;
  const v = await verifyOnlineCompact({
    domain,
    source: {
      lookupStatement: async () => {
        const head = await lookups.lookupStatement();
        issuer = (head as { statement?: { issuer?: unknown } } | null)?.statement?.issuer;
        return head;
      },
      compact: lookups.compact,
      keySet: lookups.keySet,
      logKey: async () => (await lookups.vkey()) ?? Promise.reject(new NotInLogError('this deployment keeps no transparency log')),
    },
    log: options.withLog,
    policy: options.policy,
    ...(options.maxAgeMs === undefined ? {} : { maxAgeMs: options.maxAgeMs }),
    now: options.now,
  });
  const trust = trustJson(v.trust, lookups.trust);
  if (v.entry) {
    const structured = entryVerificationJson({ ...v, entry: v.entry }, options.policy !== undefined, trust, options.now);
    const { domain: d, status, tier, score, next_audit_at, record_hash } = v.entry;
    const text = JSON.stringify({ domain: d, status, tier, score, next_audit_at, record_hash, record_fetched: false });
    return { text, proof: null, bucket: v.bucket, structured: { ...structured, record: null } };
  }
  // A statement that did not hold (untrusted key, not logged, not witnessed) is a verdict, as a record's failed step is.
  const failed = statementFailureJson(v, domain, options.policy !== undefined, options.withLog, trust);
  if (failed)
    return {
      text: JSON.stringify({ domain, code: v.code, message: v.message }),
      proof: null,
      bucket: v.bucket,
      structured: { ...failed, record: null },
    };
  if (!v.verification) throw new MvrError(v.code ?? 'INCOMPLETE_PREFIX_ANSWER', v.message ?? 'the compact answer did not hold');
  // The package puts the build statement's log and witness steps in the absence's verification.
  const structured = verificationJson(v.verification, options.policy !== undefined, trust, undefined, true);
  // A proven absence: the never-audited record, made here as a gateway makes it, as of the build the absence is proven in.
  const absence = v.verification.absence;
  const record =
    absence?.valid && typeof issuer === 'string'
      ? unverifiedRecord(domain, { issuer, schemaUrl: defaultSchemaUrl(issuer), issuedAt: absence.issuedAt })
      : v.verification.answer;
  return { text: JSON.stringify(record), proof: null, bucket: v.bucket, structured: { ...structured, record } };
}

/** One domain of a private batch: its verification, or why it has none (INVALID_DOMAIN, UNAVAILABLE). */
export type PrivateBatchResult = { domain: string; verified: VerifiedAnswer } | { domain: string; problem: MvrError };

/**
 * Verifies every domain of a batch through compact answers, in order. The live statement is read
 * once, and domains whose hashes share a bucket share its answer: it is fetched once and each of
 * them is verified against it, so a batch costs one lookup a bucket it touches, not one a domain,
 * and one read of the key set. A domain
 * that is not valid, or whose answer is unavailable, is a problem in its place; any other failure
 * (a prefix answer that does not hold, a gateway that cannot be reached) fails the batch, as it
 * does a single lookup.
 */
export async function verifyBatchPrivately(
  domains: string[],
  lookups: PrivateLookups,
  options: PrivateSettings,
): Promise<PrivateBatchResult[]> {
  const buckets = shared((key) => {
    const [bits, hex] = key.split('/');
    return lookups.compact(Number(bits), hex!);
  });
  const keySets = shared(() => lookups.keySet());
  const statements = shared(() => lookups.lookupStatement());
  return Promise.all(
    domains.map(async (domain): Promise<PrivateBatchResult> => {
      try {
        const [keySet, head, bucket] = [keySets(), statements(), buckets()];
        const mine = {
          ...lookups,
          compact: (bits: number, hex: string) => bucket(`${bits}/${hex}`) as Promise<Uint8Array>,
          keySet: () => keySet(''),
          lookupStatement: () => head(''),
        };
        return { domain, verified: await verifyPrivately(normalizeDomain(domain), mine, options) };
      } catch (error) {
        if (isMvrError(error) && (error.code === 'INVALID_DOMAIN' || error.code === 'UNAVAILABLE')) return { domain, problem: error };
        throw error;
      }
    }),
  );
}

/**
 * Reads shared by the verifications of one batch, by key (`bits/hex` for a bucket; '' for the
 * statement and the key set): the first ask fetches, and every other verification asking the same
 * gets that answer (in flight or done). A verification asking a second time (the package looks once
 * more when a build went live while it read, or reads the key set again for a key it does not hold)
 * fetches again, and the verifications after it get the newer answer.
 */
function shared(read: (key: string) => Promise<unknown>): () => (key: string) => Promise<unknown> {
  const answers = new Map<string, Promise<unknown>>();
  const fetch = (key: string) => {
    const answer = read(key);
    answers.set(key, answer);
    return answer;
  };
  return () => {
    const asked = new Set<string>();
    return (key) => {
      if (asked.has(key)) return fetch(key);
      asked.add(key);
      return answers.get(key) ?? fetch(key);
    };
  };
}
