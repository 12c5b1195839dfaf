import { type TlogPolicy, verifyOnlinePrivately } from '@merchant-verify/verifier';
import { isMvrError, MvrError, NotInLogError } from '../core/errors/errors.ts';
import { normalizeDomain } from '../core/rules/domain.ts';
import { defaultSchemaUrl, unverifiedRecord } from '../core/rules/record.ts';
import { type TrustSources, trustJson } from '../presentation/trust-report.ts';
import { verificationJson } from '../presentation/verification-json.ts';
import type { VerifiedAnswer } from './verification.ts';

// verify_merchant and verify_merchants in their private form (the default over a remote gateway): the answer comes from a prefix lookup (`GET /v1/lookup/{prefix}`
// of a remote gateway, or the same answer made in-process) and is verified by the package's
// verifyOnlinePrivately, so the lookup itself names a prefix of the domain's hash, never the domain.

/** The prefix answer for a hex prefix, as `GET /v1/lookup/{prefix}` gives it; null or INVALID_PREFIX thrown for a prefix of another length. */
export type PrefixLookup = (prefix: string) => Promise<unknown>;

/** The verification settings of one tool call. */
export interface PrivateSettings {
  withLog: boolean;
  policy?: TlogPolicy;
  maxAgeMs?: number;
  now?: number;
}

/** What the private path verifies with: the prefix lookup, the key set and the log's key. */
export interface PrivateLookups {
  prefix: PrefixLookup;
  /** The live statement (`GET /v1/lookup` of a remote gateway): the prefix length is read there and sent once; without it (in-process) found by refusals. */
  lookupStatement?: () => Promise<unknown>;
  keySet: () => Promise<unknown>;
  vkey: () => Promise<string | null>;
  /** Where the key set and the log key come from, for the answer's `trust`. */
  trust: TrustSources;
}

/**
 * Verifies a normalized domain through its prefix answer. The verdict is the plain lookup's (a
 * record verified, or its absence proven); a record's log step is its build statement's entry in
 * the log (the record's own log proof would name the domain). A prefix answer that does not hold
 * is thrown as its coded error (MALFORMED_PREFIX_ANSWER, PREFIX_MISMATCH, PADDING_MISMATCH,
 * INCOMPLETE_PREFIX_ANSWER).
 */
export async function verifyPrivately(
  domain: string,
  lookups: PrivateLookups,
  options: PrivateSettings,
): Promise<VerifiedAnswer & { prefix: string | null }> {
  // The issuer of the build statement the answer carries (signed, once the verdict holds).
  let issuer: unknown;
  const v = await verifyOnlinePrivately({
    domain,
    source: {
      ...(lookups.lookupStatement ? { lookupStatement: lookups.lookupStatement } : {}),
      // In-process (no statement), a refused length is how the client learns the build's: null, and it asks with one digit more.
      prefix: async (p) => {
        try {
          const answer = await lookups.prefix(p);
          issuer = (answer as { statement?: { issuer?: unknown } } | null)?.statement?.issuer;
          return answer;
        } catch (error) {
          if (isMvrError(error) && error.code === 'INVALID_PREFIX') return null;
          throw error;
        }
      },
      keySet: lookups.keySet,
      logKey: async () => (await lookups.vkey()) ?? Promise.reject(new NotInLogError('this deployment keeps no transparency log')),
    },
    log: options.withLog,
    policy: options.policy,
    ...(options.maxAgeMs === undefined ? {} : { maxAgeMs: options.maxAgeMs }),
    now: options.now,
  });
  if (!v.verification) throw new MvrError(v.code ?? 'INCOMPLETE_PREFIX_ANSWER', v.message ?? 'the prefix answer did not hold');
  // The package puts the build statement's log and witness steps in the record's verification.
  const structured = verificationJson(v.verification, options.policy !== undefined, trustJson(v.trust, lookups.trust), undefined, true);
  // A proven absence: the never-audited record, made here as a gateway makes it, as of the build the absence is proven in.
  const absence = v.verification.absence;
  const record =
    absence?.valid && typeof issuer === 'string'
      ? unverifiedRecord(domain, { issuer, schemaUrl: defaultSchemaUrl(issuer), issuedAt: absence.issuedAt })
      : v.answer;
  return { text: JSON.stringify(record), proof: null, prefix: v.prefix, structured: { ...structured, record } };
}

/** One domain of a private batch: its verification, or why it has none (INVALID_DOMAIN, UNAVAILABLE). */
export type PrivateBatchResult = { domain: string; verified: VerifiedAnswer } | { domain: string; problem: MvrError };

/**
 * Verifies every domain of a batch through prefix answers, in order. Domains whose hashes share a
 * prefix share its answer: it is fetched once and each of them is verified against it, so a batch
 * costs one lookup a prefix it touches, not one a domain, and one read of the key set. A domain
 * that is not valid, or whose answer is unavailable, is a problem in its place; any other failure
 * (a prefix answer that does not hold, a gateway that cannot be reached) fails the batch, as it
 * does a single lookup.
 */
export async function verifyBatchPrivately(
  domains: string[],
  lookups: PrivateLookups,
  options: PrivateSettings,
): Promise<PrivateBatchResult[]> {
  const prefixes = shared(lookups.prefix);
  const keySets = shared(() => lookups.keySet());
  const statement = lookups.lookupStatement;
  const statements = statement ? shared(() => statement()) : null;
  return Promise.all(
    domains.map(async (domain): Promise<PrivateBatchResult> => {
      try {
        const keySet = keySets();
        const head = statements?.();
        const mine = { ...lookups, prefix: prefixes(), keySet: () => keySet(''), ...(head ? { lookupStatement: () => head('') } : {}) };
        return { domain, verified: await verifyPrivately(normalizeDomain(domain), mine, options) };
      } catch (error) {
        if (isMvrError(error) && (error.code === 'INVALID_DOMAIN' || error.code === 'UNAVAILABLE')) return { domain, problem: error };
        throw error;
      }
    }),
  );
}

/**
 * Reads shared by the verifications of one batch, by key (a prefix; '' for the key set): the first
 * ask fetches, and every other verification asking the same gets that answer (in flight or done).
 * A verification asking a second time (the package looks once more when a build went live while it
 * read, or reads the key set again for a key it does not hold) fetches again, and the verifications
 * after it get the newer answer.
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
