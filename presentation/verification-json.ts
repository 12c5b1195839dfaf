import { type AnswerVerification, ageOf, type BundleVerification, verdictOf } from '@merchant-verify/verifier';
import type { Checkpoint } from '#shared';
import { unicodeDomain } from '../core/rules/domain.ts';
import { witnessedJson } from '../core/rules/witnessed.ts';
import { snakeCaseMembers } from './json-members.ts';
import type { TrustJson } from './trust-report.ts';

// One JSON shape of a verification, for every edge that answers in JSON (`mvr verify --json`, the
// MCP tools): the verdict first, each step under its own member, what the answer claims last.

/** A step that failed, as the JSON gives it. */
const failed = (step: { code: string; message: string }) => ({ valid: false, code: step.code, message: step.message });

/** An entry proven in the log. */
export const entryJson = (entry: { index: number; checkpoint: Checkpoint }) => ({
  valid: true,
  code: null,
  message: null,
  index: entry.index,
  tree_size: entry.checkpoint.size,
  origin: entry.checkpoint.origin,
});

/**
 * A verification as JSON: `valid`, `code` and `message` (the verdict: valid only when every check
 * asked for held; a proven absence is `NEVER_AUDITED`, not valid), then `domain`, then one member a
 * step: `signature`, `absence` and `log` (null when not run), `witnesses` (null without a policy),
 * `age` (how old the build and the newest verified cosignature are at `now`), `staleness`; `trust`,
 * where the key set and the log key came from (null when the edge cannot say); last `claims`, what
 * the answer says of itself (facts only when `valid`). A bundle's verification adds `place` (the
 * record's leaf in the build's map) and `statement` (the build statement: its signature, its entry
 * in the log), which then decides the witnesses. `current` says whether the answer was proven of the
 * newest build ({@link currentJson}). `policy`: whether a witness policy was given; `privately`: a
 * private lookup, whose log step is its build statement's entry.
 */
export function verificationJson(
  verification: AnswerVerification | BundleVerification,
  policy: boolean,
  trust: TrustJson | null = null,
  now?: number,
  privately = false,
): Record<string, unknown> {
  const { answer, signature, absence, log, witnessed } = verification;
  const bundle = 'place' in verification ? verification : null;
  const decided = bundle?.statement ?? absence ?? log;
  return {
    ...verdictOf(verification),
    domain: answer.domain ?? null,
    // An IDN's Unicode form beside its A-labels, for people; `domain` stays the record key.
    domain_unicode: unicodeDomain(answer.domain),
    signature: signature.valid
      ? { valid: true, code: null, message: null, key_id: signature.keyId }
      : { ...failed(signature), key_id: signature.keyId ?? null },
    absence:
      absence &&
      (absence.valid
        ? {
            valid: true,
            code: null,
            message: null,
            build: absence.build,
            issued_at: absence.issuedAt,
            key_id: absence.keyId,
            // With the log's key: where the build's statement is in the log.
            log: absence.statementLog ? entryJson(absence.statementLog) : null,
          }
        : failed(absence)),
    log: log && (log.valid ? entryJson(log) : failed(log)),
    ...(bundle
      ? {
          place:
            bundle.place &&
            (bundle.place.valid ? { valid: true, code: null, message: null, index: bundle.place.index } : failed(bundle.place)),
          statement:
            bundle.statement &&
            (bundle.statement.valid
              ? {
                  valid: true,
                  code: null,
                  message: null,
                  build: bundle.statement.build,
                  issued_at: bundle.statement.issuedAt,
                  key_id: bundle.statement.keyId,
                  log: bundle.statement.statementLog ? entryJson(bundle.statement.statementLog) : null,
                }
              : failed(bundle.statement)),
        }
      : {}),
    witnesses: !policy
      ? null
      : witnessed
        ? { valid: true, code: null, message: null, ...witnessedJson(witnessed) }
        : decided && !decided.valid
          ? failed(decided)
          : { valid: false, code: 'NOT_WITNESSED', message: 'no proof whose checkpoint the policy could check' },
    current: currentJson(verification, privately),
    age: ageJson(verification, now),
    staleness: snakeCaseMembers(signature.staleness),
    trust,
    claims: { status: answer.status ?? null, tier: answer.tier ?? null, score: answer.score ?? null, key_id: answer.key_id ?? null },
  };
}

/**
 * Whether the answer was proven of the newest build: true when its build statement's log proof held
 * as its checkpoint's last entry (an absence proof's, a prefix answer's, a bundle's: online, a
 * record checked with the log carries its bundle's); null when nothing proved it (no log check, a
 * failed step, a named kept build, or a record whose source serves no bundle: its own log proof
 * shows it was logged once, not that its build is the newest).
 */
export function currentJson(verification: AnswerVerification | BundleVerification, privately = false): true | null {
  const bundle = 'place' in verification ? verification.statement : null;
  const entry = bundle?.valid
    ? bundle.statementLog
    : verification.absence?.valid
      ? verification.absence.statementLog
      : privately && verification.log?.valid
        ? verification.log
        : undefined;
  return entry !== undefined && entry.index === entry.checkpoint.size - 1 ? true : null;
}

/** How old the build and its newest verified cosignature are (`ageOf`), as the JSON says it. */
function ageJson(verification: AnswerVerification, now?: number) {
  const age = ageOf(verification, now);
  return {
    issued_at: age.issuedAt,
    build_age_seconds: age.buildAgeSeconds,
    newest_cosignature_at: age.newestCosignatureAt === null ? null : new Date(age.newestCosignatureAt).toISOString(),
    newest_cosignature_age_seconds: age.newestCosignatureAgeSeconds,
  };
}
