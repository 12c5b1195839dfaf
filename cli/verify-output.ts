import { type AnswerVerification, ageOf, type BundleVerification, verdictOf } from '@merchant-verify/verifier';
import type { Checkpoint } from '#shared';
import { exitCodeOf } from '../core/errors/errors.ts';
import { displayDomain } from '../core/rules/domain.ts';
import { witnessedText } from '../core/rules/witnessed.ts';
import { type TrustJson, trustLines } from '../presentation/trust-report.ts';
import { verificationJson } from '../presentation/verification-json.ts';

// How `mvr verify` shows a verification: the JSON members, the text lines, the exit code.

/** What `mvr verify` prints and exits with. */
export interface Outcome {
  json: Record<string, unknown>;
  text: string;
  exitCode: number;
}

/** How a verification is shown, beside the verification itself. */
export interface Shown {
  /** Whether a witness policy was given (the witnesses step is then shown, held or not). */
  policy?: boolean;
  /** What was trusted, and from where (null when the edge cannot say: a mirror's own keys). */
  trust?: TrustJson | null;
  /** A private lookup: its log step is the build statement's entry, not the record's. */
  private?: boolean;
}

/**
 * The verification as `mvr verify` prints it, and its exit code from the verdict (0 only when
 * valid; otherwise the registry's exit code of the verdict's code). Both the JSON and the text lead
 * with the verdict; what a record claims comes last, and is labelled as unverified when the verdict
 * is not valid. A key set or log key taken on first use is said in a line of its own.
 */
export function present(verification: AnswerVerification | BundleVerification, source: string, shown: Shown = {}): Outcome {
  const verdict = verdictOf(verification);
  const exitCode = verdict.code === null ? 0 : exitCodeOf(verdict.code);
  const trust = shown.trust ?? null;
  const { valid, code, message, domain, domain_unicode, ...steps } = verificationJson(
    verification,
    shown.policy === true,
    trust,
    undefined,
    shown.private,
  );
  const json = { valid, code, message, domain, domain_unicode, source, ...steps, ...(shown.private ? { private: true } : {}) };
  const text = textOf(verification, verdict, steps as StepsJson, trust, shown.private === true);
  return { json, text, exitCode };
}

/** The JSON's members the text reads, so the two never disagree: the witnesses step (null without a policy), and `current`. */
type StepsJson = { witnesses: { valid: boolean; code: string | null; message: string | null } | null; current: true | null };

/** The text: the verdict line, the steps, what was taken on first use, then the claims (as facts only when valid). */
function textOf(
  verification: AnswerVerification | BundleVerification,
  verdict: ReturnType<typeof verdictOf>,
  shown: StepsJson,
  trust: TrustJson | null,
  privately: boolean,
): string {
  const { answer: r, signature: result, absence, log, witnessed } = verification;
  const { witnesses, current } = shown;
  const s = result.staleness;
  // An IDN is shown in Unicode beside its A-labels: `xn--bcher-kva.example (bücher.example)`.
  const domain = r.domain === undefined || r.domain === null ? '(no domain)' : displayDomain(String(r.domain));
  const head = verdict.valid
    ? `VALID: ${domain}`
    : `${verdict.code === 'NEVER_AUDITED' ? 'NOT VERIFIED' : 'INVALID'} (${verdict.code}): ${verdict.message}`;
  const day = (t: string | null) => (t ? t.slice(0, 10) : '-');
  const audited =
    s.state === 'never_audited'
      ? 'never audited'
      : `${day(s.lastAuditedAt)} (${s.ageDays} day${s.ageDays === 1 ? '' : 's'} ago); next audit ${day(s.nextAuditAt)}${s.state === 'overdue' ? ` (overdue by ${s.overdueDays} days)` : ''}`;
  const claims = `${String(r.status ?? '-')}${r.tier ? `, tier ${String(r.tier)}` : ''}, score ${r.score === null || r.score === undefined ? 'none' : `${String(r.score)}/100`}`;
  const signature = result.valid
    ? `valid (key ${result.keyId})`
    : result.code === 'UNSIGNED'
      ? 'none: the record is unsigned, so it is NOT verified (UNSIGNED)'
      : `INVALID: ${result.code} (${result.message})`;
  // A never-audited answer carries no signature by design: its absence proof is what proves it, so
  // it gets no signature line (an alarming "UNSIGNED" there would contradict a proven answer).
  const provenAbsent = absence !== null && absence !== undefined && !result.valid && result.code === 'UNSIGNED';
  const steps = [
    ...(provenAbsent ? [] : [`  signature  ${signature}`]),
    ...(absence
      ? [
          `  absence    ${absence.valid ? `never audited in build ${absence.build} (issued ${absence.issuedAt}), proof valid (key ${absence.keyId})${absence.statementLog ? `; statement in the log: ${entryText(absence.statementLog)}` : ''}` : `NOT PROVEN: ${absence.code} (${absence.message})`}`,
        ]
      : []),
    ...(log
      ? [
          `  log        ${log.valid ? `${privately ? 'build statement ' : ''}included: ${entryText(log)}` : `NOT PROVEN: ${log.code} (${log.message})`}`,
        ]
      : []),
    ...('place' in verification ? bundleSteps(verification) : []),
    ...(verdict.valid && log && current === null
      ? [
          '  current    NOT PROVEN: no bundle of the live build was checked (a gateway without /v1/bundle, or a saved record), so nothing ties this record to the newest build: its log proof shows only that it was logged once',
        ]
      : []),
    // Said as the JSON says it, so the text and the JSON never disagree on the witnesses.
    ...(witnesses
      ? [`  witnesses  ${witnessed && witnesses.valid ? witnessedText(witnessed) : `NOT PROVEN: ${witnesses.code} (${witnesses.message})`}`]
      : []),
    ...trustLines(trust),
    ...ageLines(verification),
  ];
  const lines = verdict.valid
    ? [head, `  status     ${claims}`, `  audited    ${audited}`, ...steps]
    : [
        head,
        `  domain     ${domain}`,
        ...steps,
        `  claims     (not verified) status ${claims}; ${s.state === 'never_audited' ? 'never audited' : `audited ${audited}`}`,
      ];
  return `${lines.join('\n')}\n`;
}

/** How old the build is and, when a policy verified cosignatures, the newest of them: nothing refuses an answer for its age without --max-age. */
function ageLines(verification: AnswerVerification): string[] {
  const age = ageOf(verification);
  if (age.issuedAt === null) return [];
  const cosigned =
    age.newestCosignatureAt === null
      ? ''
      : `; newest cosignature ${new Date(age.newestCosignatureAt).toISOString()} (${ago(age.newestCosignatureAgeSeconds!)})`;
  return [`  age        build issued ${age.issuedAt} (${ago(age.buildAgeSeconds!)})${cosigned}`];
}

/** A whole number of days, else hours, else minutes ago. */
function ago(seconds: number): string {
  const [n, unit] =
    seconds >= 86_400
      ? [Math.floor(seconds / 86_400), 'day']
      : seconds >= 3600
        ? [Math.floor(seconds / 3600), 'hour']
        : [Math.floor(seconds / 60), 'minute'];
  return `${n} ${unit}${n === 1 ? '' : 's'} ago`;
}

/** An entry proven in the log, as the text says it. */
function entryText(entry: { index: number; checkpoint: Checkpoint }): string {
  return `entry ${entry.index} of ${entry.checkpoint.size} in ${entry.checkpoint.origin}`;
}

/** A bundle's own steps, as the text says them: the record's place in the build's map, and the statement. */
function bundleSteps({ place, statement }: BundleVerification): string[] {
  return [
    ...(place
      ? [`  place      ${place.valid ? `leaf ${place.index} of the build's domain map` : `NOT PROVEN: ${place.code} (${place.message})`}`]
      : []),
    ...(statement
      ? [
          `  statement  ${statement.valid ? `build ${statement.build} (issued ${statement.issuedAt}), signed (key ${statement.keyId})${statement.statementLog ? `; in the log: ${entryText(statement.statementLog)}` : ''}` : `NOT PROVEN: ${statement.code} (${statement.message})`}`,
        ]
      : []),
  ];
}
