import type { AnswerVerification } from '@merchant-verify/verifier';
import type { Checkpoint } from '@merchant-verify/verifier/internal/tlog';
import { exitCodeOf } from '../core/errors.ts';
import { witnessedJson, witnessedText } from '../core/witnessed.ts';

// How `mvr verify` shows a verification: the JSON members, the text lines, the exit code.

/** What `mvr verify` prints and exits with. */
export interface Outcome {
  json: Record<string, unknown>;
  text: string;
  exitCode: number;
}

/** The verification as `mvr verify` prints it, and its exit code from the verdict; `policy`: whether a witness policy was given. */
export function present(verification: AnswerVerification, source: string, policy = false): Outcome {
  const { answer: r, signature: result, absence, log, witnessed } = verification;
  // The absence proof decides a never-audited answer (NEVER_AUDITED when it holds, never 0);
  // otherwise the signature, then a valid record that --log cannot find in the log fails with the log's code.
  const exitCode = verification.code === null ? 0 : exitCodeOf(verification.code);
  const s = result.staleness;
  const json = {
    domain: r.domain ?? null,
    valid: result.valid,
    code: result.valid ? null : result.code,
    message: result.valid ? null : result.message,
    key_id: result.keyId ?? null,
    status: r.status ?? null,
    tier: r.tier ?? null,
    score: r.score ?? null,
    staleness: s,
    source,
    ...(absence
      ? {
          absence: absence.valid
            ? {
                valid: true,
                build: absence.build,
                issued_at: absence.issuedAt,
                key_id: absence.keyId,
                // With --log: where the build's statement is in the log.
                ...(absence.statementLog ? { log: logJson(absence.statementLog) } : {}),
              }
            : { valid: false, code: absence.code, message: absence.message },
        }
      : {}),
    ...(log
      ? {
          log: log.valid ? logJson(log) : { valid: false, code: log.code, message: log.message },
        }
      : {}),
    // With --policy: when the proof that decided was last witnessed (null when it was not).
    ...(policy ? { witnessed: witnessed && witnessedJson(witnessed) } : {}),
  };
  const day = (t: string | null) => (t ? t.slice(0, 10) : '-');
  const audited =
    s.state === 'never_audited'
      ? 'never audited'
      : `${day(s.lastAuditedAt)} (${s.ageDays} day${s.ageDays === 1 ? '' : 's'} ago); next audit ${day(s.nextAuditAt)}${s.state === 'overdue' ? ` (overdue by ${s.overdueDays} days)` : ''}`;
  const signature = result.valid
    ? `valid (key ${result.keyId})`
    : result.code === 'UNSIGNED'
      ? 'none: the record is unsigned, so it is NOT verified (UNSIGNED)'
      : `INVALID: ${result.code} (${result.message})`;
  const text = [
    String(r.domain ?? '(no domain)'),
    `  status     ${String(r.status ?? '-')}${r.tier ? `, tier ${String(r.tier)}` : ''}, score ${r.score === null || r.score === undefined ? 'none' : `${String(r.score)}/100`}`,
    `  audited    ${audited}`,
    `  signature  ${signature}`,
    ...(absence
      ? [
          `  absence    ${absence.valid ? `never audited in build ${absence.build} (issued ${absence.issuedAt}), proof valid (key ${absence.keyId})${absence.statementLog ? `; statement in the log: ${entryText(absence.statementLog)}` : ''}` : `NOT PROVEN: ${absence.code} (${absence.message})`}`,
        ]
      : []),
    ...(log ? [`  log        ${log.valid ? `included: ${entryText(log)}` : `NOT PROVEN: ${log.code} (${log.message})`}`] : []),
    ...(policy ? [`  witnessed  ${witnessed ? witnessedText(witnessed) : 'NOT PROVEN (see the proof above)'}`] : []),
    '',
  ].join('\n');
  return { json, text, exitCode };
}

/** An entry proven in the log, as the JSON gives it. */
function logJson(entry: { index: number; checkpoint: Checkpoint }) {
  return { valid: true, index: entry.index, tree_size: entry.checkpoint.size, origin: entry.checkpoint.origin };
}

/** An entry proven in the log, as the text says it. */
function entryText(entry: { index: number; checkpoint: Checkpoint }): string {
  return `entry ${entry.index} of ${entry.checkpoint.size} in ${entry.checkpoint.origin}`;
}
