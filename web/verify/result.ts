// How the verify page shows a verdict: the heading, the steps, and what an answer claims (as facts
// only when it verified). app.ts verifies; this file only writes the result into the page.

import {
  type AbsenceResult,
  type AnswerVerification,
  type CompactVerification,
  type EntryVerdict,
  FetchFailedError,
  verdictOf,
  type Witnessed,
} from '@merchant-verify/verifier';
import { displayDomain } from '../../core/rules/domain.ts';

export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
export const result = $('result');
const verdict = $('verdict');
const note = $('note');
const details = $('details');
const claims = $('claims') as HTMLDetailsElement;
const claimed = $('claimed');

/** A row of the result: name, value, and `warn` for a value a reader must not miss (an overdue audit). */
export type Row = [name: string, value: string, tone?: 'warn' | undefined];
type State = 'valid' | 'absent' | 'invalid' | 'error';

function fill(list: HTMLElement, rows: Row[]): void {
  list.replaceChildren(
    ...rows.flatMap(([name, value, tone]) => {
      const dt = document.createElement('dt');
      dt.textContent = name;
      const dd = document.createElement('dd');
      dd.textContent = value;
      if (tone) dd.className = tone;
      return [dt, dd];
    }),
  );
}

/**
 * Shows a verdict. `claimed` is what a record that did not verify says about itself: never shown
 * as facts beside the verdict, only behind a toggle, struck through and labelled as unverified.
 */
export function show(state: State, title: string, rows: Row[], extra: { note?: string; warn?: boolean; claimed?: Row[] } = {}): void {
  result.dataset.state = state;
  verdict.textContent = title;
  note.textContent = extra.note ?? '';
  note.hidden = !extra.note;
  note.className = extra.warn ? 'warn' : '';
  fill(details, rows);
  fill(claimed, extra.claimed ?? []);
  claims.open = false;
  claims.hidden = !extra.claimed?.length;
  result.focus();
}
/** The row saying when the proof's checkpoint was last witnessed (with a policy only). */
function witnessedRows(witnessed: Witnessed | null): Row[] {
  if (!witnessed) return [];
  const at = witnessed.witnessedAt === null ? 'not asked for (quorum none)' : new Date(witnessed.witnessedAt).toISOString();
  return [['Last witnessed', `${at}${witnessed.cosigners.length ? ` by ${witnessed.cosigners.map((c) => c.witness).join(', ')}` : ''}`]];
}

/** What a record's log step says, as a row (when the log was checked). */
function logRows(log: AnswerVerification['log'], entry = ''): Row[] {
  if (!log) return [];
  return [
    ['Log', log.valid ? `${entry}entry ${log.index} of ${log.checkpoint.size} in ${log.checkpoint.origin}` : `${log.code}: ${log.message}`],
  ];
}

/**
 * A record's verdict: the verdict as the heading, then the steps (signature, log, witnesses), then
 * what the record says, as facts only when valid. A record that failed shows its claims behind a toggle.
 */
function report(verification: AnswerVerification, extra: Row[] = [], entry = ''): void {
  const { answer: r, signature, log, witnessed } = verification;
  const verdict = verdictOf(verification);
  const text = (v: unknown) => (v === null || v === undefined ? '-' : String(v));
  const staleness = signature.staleness;
  const claims: Row[] = [
    ['Status', text(r.status)],
    ['Tier', text(r.tier)],
    ['Score', text(r.score)],
    ['Last audited', text(r.last_audited_at)],
    [
      'Staleness',
      `${staleness.state}${typeof staleness.ageDays === 'number' ? `, ${staleness.ageDays} days` : ''}`,
      staleness.state === 'overdue' ? 'warn' : undefined,
    ],
  ];
  if (verdict.valid) {
    const steps: Row[] = [
      ['Domain', typeof r.domain === 'string' ? displayDomain(r.domain) : text(r.domain)],
      ['Signature', `valid (key ${text(signature.keyId)})`],
      ...logRows(log, entry),
      ...witnessedRows(witnessed),
      ...extra,
    ];
    const overdue = staleness.state === 'overdue';
    show(
      'valid',
      'Valid signature',
      [...steps, ...claims],
      overdue ? { note: 'Warning: the monthly re-audit is overdue; this record may no longer describe the shop.', warn: true } : {},
    );
  } else {
    show('invalid', `Not verified: ${verdict.code}`, [['Reason', `${verdict.code}: ${verdict.message}`]], {
      note: 'The signature did not verify, so nothing this record says is established.',
      claimed: [['Domain', text(r.domain)], ['Key', text(r.key_id)], ...claims],
    });
  }
}

/** A never-audited answer, with its absence proof checked: proven only when the proof holds. */
function reportAbsence(domain: string, absence: AbsenceResult, witnessed: Witnessed | null, extra: Row[] = []): void {
  if (absence.valid) {
    show(
      'absent',
      'Never audited: absence proven',
      [
        ['Domain', displayDomain(domain)],
        ['Status', 'unverified (no record in the build)'],
        ['Build', absence.build],
        ['Build issued', absence.issuedAt],
        ['Key', absence.keyId],
        ...witnessedRows(witnessed),
        ...extra,
      ],
      {
        note: `${displayDomain(domain)} has no record in build ${absence.build}, issued ${absence.issuedAt}: it was never audited. This is not a verification of the shop.`,
      },
    );
  } else {
    show('invalid', `Absence not proven: ${absence.code}`, [['Reason', absence.message], ['Domain', domain], ...extra]);
  }
}

/** Shows why a lookup did not get as far as a verdict: the gateway's refusal, or what failed. */
export function showFailure(error: unknown): void {
  if (error instanceof FetchFailedError && error.status !== undefined)
    show('error', `Lookup refused: ${error.problem ?? error.status}`, [['Problem', error.message]]);
  else show('error', 'Could not verify', [['Problem', (error as Error).message]]);
}

/** Shows a verification's verdict: a never-audited answer by its absence proof, a record by its signature, then its log proof. */
export function render(verification: AnswerVerification, domain: unknown, extra: Row[] = [], entry = ''): void {
  const { absence, log, witnessed } = verification;
  if (absence) reportAbsence(String(domain ?? verification.answer.domain), absence, witnessed, extra);
  else if (verification.signature.valid && log && !log.valid)
    show('invalid', `Not proven: ${log.code}`, [['Reason', log.message]], { claimed: [['Domain', String(verification.answer.domain)]] });
  else report(verification, extra, entry);
}

/**
 * Shows a verdict from a domain's map entry (a private lookup of an audited domain): what the entry
 * proves (status, tier, score, next audit, the record's hash) and the build statement's steps, and
 * that the record itself was not fetched. A failure the entry carries (the statement not proven in
 * the log) shows its claims only behind the toggle, as a record's are.
 */
export function renderEntry(v: CompactVerification & { entry: EntryVerdict }, extra: Row[] = []): void {
  const e = v.entry;
  const s = v.statement?.valid ? v.statement : null;
  const overdue = e.next_audit_at !== null && Date.parse(e.next_audit_at) < Date.now();
  const claims: Row[] = [
    ['Status', e.status],
    ['Tier', e.tier ?? '-'],
    ['Score', e.score === null ? '-' : String(e.score)],
    ['Next audit', `${e.next_audit_at ?? '-'}${overdue ? ' (overdue)' : ''}`, overdue ? 'warn' : undefined],
  ];
  const rows: Row[] = [
    ['Domain', displayDomain(e.domain)],
    ...(s ? ([['Build', `${s.build}, issued ${s.issuedAt}, statement signed by ${s.keyId}`]] as Row[]) : []),
    ['Record hash', e.record_hash],
    ...(s?.statementLog
      ? ([
          [
            'Log',
            `build statement: entry ${s.statementLog.index} of ${s.statementLog.checkpoint.size} in ${s.statementLog.checkpoint.origin}`,
          ],
        ] as Row[])
      : []),
    ...witnessedRows(v.witnessed),
    ...extra,
  ];
  const note =
    "The record itself was not fetched: this verdict is its entry in the build's domain map. To see the record, look the domain up without the private box (which sends the domain) or read it from a mirror; its SHA-256 must be the record hash above.";
  if (v.code === null) show('valid', 'Verified from its map entry', [...rows, ...claims], { note });
  else show('invalid', `Not verified: ${v.code}`, [['Reason', `${v.code}: ${v.message}`], ...rows], { note, claimed: claims });
}
