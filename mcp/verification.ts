import type { AnswerSource, TlogPolicy } from '@merchant-verify/verifier';
import { verifyOnline } from '@merchant-verify/verifier';
import { z } from 'zod';
import { isMvrError, NotInLogError } from '../core/errors/errors.ts';
import { recordSchema } from '../core/rules/record.ts';
import { bundleSchema } from '../core/schemas/bundle.ts';
import { type TrustSources, trustJson } from '../presentation/trust-report.ts';
import { verificationJson } from '../presentation/verification-json.ts';

// The verify tool's verification: its lookups (in-process, or a gateway's HTTP API) as the source
// of the package's online client, which fetches, retries and verifies as the CLI and the page do.

/** Returns the bytes of the record for a normalized domain, exactly as `GET /v1/verify` serves them; throws MvrError. */
export type RecordLookup = (domain: string) => Promise<Buffer>;
/** A normalized domain's C2SP tlog-proof, as `GET /v1/proof` gives it; throws MvrError (NOT_IN_LOG when it has none). */
export type ProofLookup = (domain: string) => Promise<{ proof: string }>;
/** The proof that a normalized domain has no record in the live build, as `GET /v1/absence` answers it; throws MvrError (HAS_RECORD when it has one). */
export type AbsenceLookup = (domain: string) => Promise<unknown>;

/** The offline bundle of a normalized domain, as `GET /v1/bundle` answers it; throws MvrError. */
export type BundleLookup = (domain: string) => Promise<unknown>;

/** What the tool verifies with, beside the lookups: the key set and the log's key the deployment publishes. */
export interface VerifyingLookups {
  lookup: RecordLookup;
  proof: ProofLookup;
  absence: AbsenceLookup;
  /** The offline bundle: it ties a record checked with the log to the live build (its currency). */
  bundle: BundleLookup;
  keySet: () => Promise<unknown>;
  /** The log's note verifier key; null when the deployment keeps no log. */
  vkey: () => Promise<string | null>;
  /** Where the key set and the log key come from, for the answer's `trust`. */
  trust: TrustSources;
}

/** A verification and the bytes it was made of: the record as served, and the proof that decided (absence or log). */
export interface VerifiedAnswer {
  text: string;
  proof: string | null;
  structured: Record<string, unknown>;
}

/**
 * Verifies a normalized domain's answer through the online client: its absence proof for a
 * never-audited answer, its log proof with `withLog` (or a policy). The structured result is the
 * verification's one JSON shape (the verdict first), with the record itself last.
 */
export async function verifyLookedUp(
  domain: string,
  lookups: VerifyingLookups,
  options: { withLog: boolean; policy?: TlogPolicy; maxAgeMs?: number; now?: number },
): Promise<VerifiedAnswer> {
  // The bytes of the last answer and proofs read: what the tool returns as text is what was verified.
  let text = '';
  let absence: string | null = null;
  let logProof: string | null = null;
  const source: AnswerSource = {
    answer: async (d) => JSON.parse((text = (await lookups.lookup(d)).toString('utf8'))),
    absence: async (d) => {
      const proof = await answerOrNull(() => lookups.absence(d), 'HAS_RECORD');
      absence = proof === null ? null : JSON.stringify(proof);
      return proof;
    },
    proof: async (d) => (logProof = (await answerOrNull(() => lookups.proof(d), 'NOT_IN_LOG'))?.proof ?? null),
    bundle: async (d) => JSON.stringify(await lookups.bundle(d)),
    keySet: lookups.keySet,
    // Asked only for a log check; a deployment without a log has no key to check with, and says so.
    logKey: async () => (await lookups.vkey()) ?? Promise.reject(new NotInLogError('this deployment keeps no transparency log')),
  };
  const verification = await verifyOnline({
    domain,
    source,
    log: options.withLog,
    policy: options.policy,
    ...(options.maxAgeMs === undefined ? {} : { maxAgeMs: options.maxAgeMs }),
    now: options.now,
  });
  return {
    text,
    proof: verification.absence ? absence : logProof,
    structured: {
      ...verificationJson(verification, options.policy !== undefined, trustJson(verification.trust, lookups.trust)),
      record: JSON.parse(text),
    },
  };
}

/** A lookup's answer, or null when it throws the code that means "none" (not a failure). */
async function answerOrNull<T>(lookup: () => Promise<T>, none: string): Promise<T | null> {
  try {
    return await lookup();
  } catch (error) {
    if (isMvrError(error) && error.code === none) return null;
    throw error;
  }
}

const step = z.object({ valid: z.boolean(), code: z.string().nullable(), message: z.string().nullable() }).loose();

/** The verify tool's structured content: the verdict, each step, what the record claims, and the record. */
export const verificationOutputSchema = z.object({
  valid: z.boolean().describe('true only when every check ran and held; a proven never-audited answer is NEVER_AUDITED, not valid'),
  code: z.string().nullable().describe('null when valid; otherwise the code of the step that decided'),
  message: z.string().nullable(),
  domain: z.string().nullable(),
  domain_unicode: z
    .string()
    .nullable()
    .describe("an IDN domain's Unicode form (null when it has no A-label), for people; domain is the key"),
  signature: step.nullable().describe("null when no record was fetched (a private lookup's entry verdict)"),
  absence: step.nullable(),
  entry: step
    .nullable()
    .optional()
    .describe(
      "a private lookup of an audited domain: its entry in the build's map proven (record_hash: SHA-256 of the record's exact bytes, base64; record_fetched: false)",
    ),
  log: step.nullable(),
  place: step
    .nullable()
    .optional()
    .describe("with the log (include_proof): the record's entry in its build's domain map, from the answer's bundle"),
  statement: step
    .nullable()
    .optional()
    .describe(
      "with the log (include_proof): the build statement, signed, logged and its checkpoint's last entry, from the answer's bundle",
    ),
  witnesses: step
    .nullable()
    .describe(
      "with this server's witness policy: whether the deciding checkpoint carries its quorum's cosignatures (within max_age when given)",
    ),
  current: z
    .literal(true)
    .nullable()
    .describe(
      "true when the answer's build statement was proven its log checkpoint's last entry (the newest build); null when nothing proved it: no log check (ask include_proof), or a failed step",
    ),
  age: z
    .object({
      issued_at: z.string().nullable(),
      build_age_seconds: z.number().nullable(),
      newest_cosignature_at: z.string().nullable(),
      newest_cosignature_age_seconds: z.number().nullable(),
    })
    .describe("how old the answer's build is (issued_at) and, with a witness policy, its newest verified cosignature"),
  staleness: z
    .object({ state: z.string() })
    .loose()
    .describe("from the record's audit dates; for an entry verdict only its next audit is known (state overdue or not_checked)"),
  trust: z
    .object({ key_set: z.string(), log_key: z.string().nullable() })
    .loose()
    .describe('where the key set and the log key came from: pinned, policy, or first_use (taken from the gateway being checked)'),
  claims: z.object({}).loose(),
  record: recordSchema
    .nullable()
    .describe(
      "the record as served; null for an audited domain looked up privately: its verdict comes from its map entry (entry: the record's hash), and the record itself was not fetched",
    ),
  bundle: bundleSchema
    .optional()
    .describe(
      'With include_proof: the offline bundle (GET /v1/bundle), everything that proves this answer in one document; keep it and check it later, offline, with verifyBundle of @merchant-verify/verifier',
    ),
});
