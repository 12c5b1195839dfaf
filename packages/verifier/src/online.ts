/**
 * One online verification: fetch what a lookup's answer needs (the answer, its absence proof or
 * log proof, the key set, the log's key) and run the one pipeline, {@link verifyAnswer}, on it.
 * The CLI, the MCP server and the verify page all verify through here, so they retry alike:
 *
 * - a signed thing (a record, an absence proof's statement) naming a key the key set lacks: the
 *   key set is fetched once more (a rotation published a key after the set was read);
 * - a record and its log proof are two requests: a proof that does not include the record (a new
 *   build went live between them), or an "unverified" answer whose absence proof the gateway
 *   refuses because the domain now has a record, makes the lookup run once more;
 * - a fetched absence proof refused as BUILD_SUPERSEDED (a build went live between the proof's
 *   statement and its checkpoint being read) makes the lookup run once more too;
 * - a record checked with the log is tied to its build by the source's bundle (`GET /v1/bundle`):
 *   the bundle's record must be the answer (else a build went live between the two requests), and
 *   its place and statement must hold as `verifyBundle` checks them, the statement its checkpoint's
 *   last entry; a mismatch or BUILD_SUPERSEDED makes the lookup run once more. A record's own log
 *   proof shows only that it was logged once, not that its build is the newest.
 *
 * Nothing is retried beyond that: a second failure is the verdict.
 */

import type { TlogPolicy } from '#shared';
import { FetchFailedError, formatVerifierKey, parseKeySet, type VerifierErrorCode } from '#shared';
import type { AnswerSource } from './gateway-source.ts';
import { type AnswerVerification, isNeverAudited, verifyAnswer } from './verify-answer.ts';
import { type BundleVerification, sameJson, verifyBundle } from './verify-bundle.ts';

export interface OnlineInput {
  /** The normalized domain asked (`normalizeDomain` of the service); an answer of any other domain fails with DOMAIN_MISMATCH. */
  domain?: string;
  /** Where to fetch whatever is not given below (`gatewaySource`, or functions of the caller's own). */
  source?: Partial<AnswerSource>;
  /** A saved answer, checked instead of fetching one. Without it and without `source.answer`, the answer is the never-audited one `absence` stands for. */
  answer?: unknown;
  /** A saved absence proof, for a never-audited answer. */
  absence?: unknown;
  /** A saved C2SP tlog-proof of the record. */
  proof?: string;
  /** The key set to check with, as is (never fetched again). */
  keySet?: unknown;
  /** The log's note verifier key; default the one log `policy` names, else `source.logKey()`. */
  vkey?: string;
  /** Whether the record must be proven in the log (a never-audited answer: its build statement). Implied by `policy`. */
  log?: boolean;
  /** A tlog-policy (`parsePolicy`): the deciding proof's checkpoint must be cosigned by its quorum. */
  policy?: TlogPolicy;
  /** With `policy`: cosignatures older than this many ms do not count. */
  maxAgeMs?: number;
  /** Clock, epoch ms (default now). */
  now?: number;
  /** A checkpoint note the caller saved and trusts: the deciding proof's checkpoint must be no smaller (see `verifyAnswer`). */
  trustedCheckpoint?: string;
  /** The kept build the answer is asked about (`build=`; `gatewaySource`'s `build` fetches it): its answer need not be the newest build's. */
  asOfBuild?: string;
}

/**
 * Where what a verification trusted came from: the caller (`given`), a witness policy's log line
 * (`policy`), or the source being checked (`source`: trust on first use, which a caller should say
 * aloud, since a source that lies can hand over the key that makes its lie verify).
 */
export interface OnlineTrust {
  /** The key set: the caller's (`input.keySet`), or fetched from the source. */
  keySet: 'given' | 'source';
  /** The log's key: the caller's (`input.vkey`), the policy's one log line, fetched from the source; null when no log check ran. */
  logKey: 'given' | 'policy' | 'source' | null;
}

/**
 * A verification, and where what it trusted came from. A record checked with the log from a source
 * that serves bundles carries the bundle's steps too (`place`, `statement`: a {@link BundleVerification}).
 */
export type OnlineVerification = (AnswerVerification | BundleVerification) & { trust: OnlineTrust };

/**
 * Fetches what `input` does not give and verifies it with {@link verifyAnswer}; resolves with its
 * verdict. Throws FETCH_FAILED when something needed cannot be fetched, and what `verifyAnswer`
 * throws on misuse (a key set that is not one, a log key that is no note verifier key).
 *
 * @example
 *   const source = gatewaySource({ baseUrl: 'https://verify.example', apiKey });
 *   const v = await verifyOnline({ domain: 'shop.example', source, policy, maxAgeMs: 36 * 3600_000 });
 *   const { valid, code } = verdictOf(v);
 */
export async function verifyOnline(input: OnlineInput): Promise<OnlineVerification> {
  const source = input.source ?? {};
  const withLog = input.log === true || input.policy !== undefined || input.trustedCheckpoint !== undefined;
  const keys = keySetOf(input.keySet, source);
  const trust: OnlineTrust = { keySet: input.keySet === undefined ? 'source' : 'given', logKey: null };
  const logKey = async () => {
    const { vkey, from } = await logKeyOf(input, source);
    trust.logKey = from;
    return vkey;
  };
  for (let attempt = 1; ; attempt++) {
    const mayRetry = attempt === 1;
    const fetchedAnswer = input.answer === undefined && input.domain !== undefined && source.answer !== undefined;
    const answer = fetchedAnswer ? await source.answer!(input.domain!) : input.answer;
    const named = (answer as { domain?: unknown } | null)?.domain;
    const asked = input.domain ?? (typeof named === 'string' ? named : undefined);
    const neverAudited = answer === undefined || (isNeverAudited(answer) && asked !== undefined);
    let absence: { proof: unknown } | { unavailable: string } | undefined;
    const fetchedAbsence = neverAudited && input.absence === undefined && source.absence !== undefined && asked !== undefined;
    if (neverAudited) {
      const proof = input.absence ?? (source.absence && asked !== undefined ? await source.absence(asked) : undefined);
      // The gateway has a record for the domain: a build may have gone live since the answer was read.
      if (proof === null && fetchedAnswer && mayRetry) continue;
      absence =
        proof === undefined
          ? { unavailable: 'no absence proof to check: give one, or a gateway to fetch it from' }
          : proof === null
            ? { unavailable: `the gateway says ${asked} has a record in its live build: this "unverified" answer is not the build's` }
            : { proof };
    }
    const signed = absence && 'proof' in absence ? (absence.proof as { statement?: unknown } | null)?.statement : answer;
    const keySet = await keys(signed);
    let log: { proof?: string; vkey: string } | undefined;
    let fetchedProof = false;
    if (withLog && !neverAudited) {
      fetchedProof = input.proof === undefined && source.proof !== undefined && asked !== undefined;
      const proof = fetchedProof ? await source.proof!(asked!) : input.proof;
      if (proof === null) return { ...notInLog(verifyAnswer({ answer, keySet, domain: input.domain, now: input.now }), asked!), trust };
      log = { vkey: await logKey(), ...(proof === undefined ? {} : { proof }) };
    } else if (withLog) {
      // A never-audited answer has no entry in the log: its absence proof's statement proof is checked with the key.
      log = { vkey: await logKey() };
    }
    const verification = verifyAnswer({
      answer,
      keySet,
      domain: input.domain,
      absence,
      log,
      policy: input.policy,
      maxAgeMs: input.maxAgeMs,
      now: input.now,
      ...(input.asOfBuild === undefined ? {} : { asOfBuild: input.asOfBuild }),
      ...(input.trustedCheckpoint === undefined ? {} : { trustedCheckpoint: input.trustedCheckpoint }),
    });
    // A proof of a newer record than the answer read: both are looked up once more.
    const logFailed = verification.log && !verification.log.valid ? verification.log : null;
    if (mayRetry && fetchedAnswer && fetchedProof && logFailed?.code === 'NOT_INCLUDED') continue;
    // A statement with a newer build logged after it, fetched while that build went live: looked up once more.
    if (mayRetry && fetchedAbsence && verification.code === 'BUILD_SUPERSEDED') continue;
    // A record's currency: its bundle ties it to the live build's statement. Not for a named kept
    // build (about the past), nor once an earlier step decided.
    const bundled = withLog && !neverAudited && verification.code === null && input.asOfBuild === undefined && source.bundle && asked;
    if (!bundled) return { ...verification, trust };
    const current = currentOf(verification, await source.bundle!(asked), {
      domain: asked,
      keySet,
      vkey: log!.vkey,
      policy: input.policy,
      maxAgeMs: input.maxAgeMs,
      now: input.now,
      trustedCheckpoint: input.trustedCheckpoint,
    });
    // Read while a build went live (the bundle of another record, or a statement a later one follows): looked up once more.
    if (mayRetry && fetchedAnswer && (current.code === 'BUNDLE_MISMATCH' || current.code === 'BUILD_SUPERSEDED')) continue;
    return { ...current, trust };
  }
}

/**
 * The record's verification with its bundle's steps: the bundle's record must be the very answer
 * verified (the same canonical JSON, the bytes a record is served as), then `verifyBundle` with the
 * same options decides its place in the live build's map and its statement (signed, logged, its
 * checkpoint's last entry, witnessed). The verdict is the first failure in order: signature, log,
 * then the bundle's place and statement.
 */
function currentOf(
  verification: AnswerVerification,
  text: string,
  o: { domain: string; keySet: unknown; vkey: string; policy?: TlogPolicy; maxAgeMs?: number; now?: number; trustedCheckpoint?: string },
): BundleVerification {
  let bundle: unknown;
  try {
    bundle = JSON.parse(text);
  } catch {
    bundle = undefined;
  }
  const record = (bundle as { record?: unknown } | null)?.record;
  if (typeof bundle === 'object' && bundle !== null && record !== undefined && !sameJson(record, verification.answer)) {
    const message = `the bundle's record of ${o.domain} is not the answer verified: the two were read from different builds`;
    const code: VerifierErrorCode = 'BUNDLE_MISMATCH';
    return { ...verification, code, place: null, statement: null, bundle: { code, message } };
  }
  const checked = verifyBundle({
    bundle,
    domain: o.domain,
    keySet: o.keySet,
    log: { vkey: o.vkey },
    ...(o.policy === undefined ? {} : { policy: o.policy }),
    ...(o.maxAgeMs === undefined ? {} : { maxAgeMs: o.maxAgeMs }),
    ...(o.now === undefined ? {} : { now: o.now }),
    ...(o.trustedCheckpoint === undefined ? {} : { trustedCheckpoint: o.trustedCheckpoint }),
  });
  return {
    ...verification,
    code: checked.code,
    place: checked.place,
    statement: checked.statement,
    bundle: checked.bundle,
    // The statement decides the answer's currency, so its checkpoint's witnesses are the ones said.
    witnessed: checked.statement ? checked.witnessed : verification.witnessed,
  };
}

/**
 * The gateway says the record is in no log (a build made without a log key, or a mirror that holds
 * no log proof of it): there is no proof for the log step, or the witnesses, to check, and the log
 * step fails as NOT_IN_LOG, its own code: nothing was shown false, so it does not read as a proof
 * that failed. As in `verifyAnswer`, a failed signature decides first.
 */
function notInLog(verification: AnswerVerification, domain: string): AnswerVerification {
  const message = `the gateway keeps no log proof of ${domain}: its record cannot be checked in the log (a build made without a log key, or a copy that holds no record proofs), which does not say it was tampered with`;
  return { ...verification, code: verification.code ?? 'NOT_IN_LOG', log: { valid: false, code: 'NOT_IN_LOG', message } };
}

/**
 * The key set for something signed: the one given, as is; else fetched, and fetched once more when
 * it does not list the key the signed thing names (a rotation published it after the set was read).
 */
export function keySetOf(given: unknown, source: Partial<AnswerSource>): (signed: unknown) => Promise<unknown> {
  let fetched: Promise<unknown> | undefined;
  let refetched = false;
  return async (signed) => {
    if (given !== undefined) return given;
    if (!source.keySet) throw new FetchFailedError('no key set given, and nowhere to fetch one from');
    fetched ??= source.keySet();
    const keySet = await fetched;
    const kid = (signed as { key_id?: unknown } | null)?.key_id;
    if (refetched || typeof kid !== 'string' || parseKeySet(keySet).keys.some((k) => k.kid === kid)) return keySet;
    refetched = true;
    fetched = source.keySet();
    return fetched;
  };
}

/** The log's key: the caller's, else the one log of the caller's policy (the reader's own trust), else the source's; and which it was. */
export async function logKeyOf(
  input: OnlineInput,
  source: Partial<AnswerSource>,
): Promise<{ vkey: string; from: Exclude<OnlineTrust['logKey'], null> }> {
  if (input.vkey !== undefined) return { vkey: input.vkey, from: 'given' };
  const logs = input.policy?.logs ?? [];
  if (logs.length === 1) return { vkey: formatVerifierKey(logs[0]!.vkey), from: 'policy' };
  if (source.logKey) return { vkey: (await source.logKey()).trim(), from: 'source' };
  throw new FetchFailedError("the log's key was not given, and there is nowhere to fetch it from");
}
