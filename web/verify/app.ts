// The verify page's script: verifies a record in the browser with @merchant-verify/verifier's
// online client (the one the CLI and MCP use), against the key set this origin publishes; a domain
// typed is normalized by the service's own rule and, by default, looked up privately: hashed here,
// only a prefix of its hash sent (GET /v1/lookup/{prefix}). Bundled for the browser by `npm run build`.
import {
  type AbsenceResult,
  type AnswerVerification,
  BUNDLE_SCHEMA_SUFFIX,
  FetchFailedError,
  gatewaySource,
  type OnlineInput,
  type PrivateOnlineInput,
  parsePolicy,
  verdictOf,
  verifyBundle,
  verifyOnline,
  verifyOnlinePrivately,
  type Witnessed,
} from '@merchant-verify/verifier';
import { normalizeDomain } from '../../core/domain.ts';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const result = $('result');
const verdict = $('verdict');
const note = $('note');
const details = $('details');
const claims = $('claims') as HTMLDetailsElement;
const claimed = $('claimed');

/** A row of the result: name, value, and `warn` for a value a reader must not miss (an overdue audit). */
type Row = [name: string, value: string, tone?: 'warn' | undefined];
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
function show(state: State, title: string, rows: Row[], extra: { note?: string; warn?: boolean; claimed?: Row[] } = {}): void {
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

/** This origin: the gateway the page came from, whose key set it checks with. */
const origin = (apiKey?: string) => gatewaySource({ baseUrl: location.origin, ...(apiKey ? { apiKey } : {}) });

/** The row saying when the proof's checkpoint was last witnessed (with a policy only). */
function witnessedRows(witnessed: Witnessed | null): Row[] {
  if (!witnessed) return [];
  const at = witnessed.witnessedAt === null ? 'not asked for (quorum none)' : new Date(witnessed.witnessedAt).toISOString();
  return [['Last witnessed', `${at}${witnessed.cosigners.length ? ` by ${witnessed.cosigners.map((c) => c.witness).join(', ')}` : ''}`]];
}

/** What a record's log step says, as a row (when the log was checked). */
function logRows(log: AnswerVerification['log']): Row[] {
  if (!log) return [];
  return [['Log', log.valid ? `entry ${log.index} of ${log.checkpoint.size} in ${log.checkpoint.origin}` : `${log.code}: ${log.message}`]];
}

/**
 * A record's verdict: the verdict as the heading, then the steps (signature, log, witnesses), then
 * what the record says, as facts only when valid. A record that failed shows its claims behind a toggle.
 */
function report(verification: AnswerVerification, extra: Row[] = []): void {
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
      ['Domain', text(r.domain)],
      ['Signature', `valid (key ${text(signature.keyId)})`],
      ...logRows(log),
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
        ['Domain', domain],
        ['Status', 'unverified (no record in the build)'],
        ['Build', absence.build],
        ['Build issued', absence.issuedAt],
        ['Key', absence.keyId],
        ...witnessedRows(witnessed),
        ...extra,
      ],
      {
        note: `${domain} has no record in build ${absence.build}, issued ${absence.issuedAt}: it was never audited. This is not a verification of the shop.`,
      },
    );
  } else {
    show('invalid', `Absence not proven: ${absence.code}`, [['Reason', absence.message], ['Domain', domain], ...extra]);
  }
}

/** Shows why a lookup did not get as far as a verdict: the gateway's refusal, or what failed. */
function showFailure(error: unknown): void {
  if (error instanceof FetchFailedError && error.status !== undefined)
    show('error', `Lookup refused: ${error.problem ?? error.status}`, [['Problem', error.message]]);
  else show('error', 'Could not verify', [['Problem', (error as Error).message]]);
}

/** Shows a verification's verdict: a never-audited answer by its absence proof, a record by its signature, then its log proof. */
function render(verification: AnswerVerification, domain: unknown, extra: Row[] = []): void {
  const { absence, log, witnessed } = verification;
  if (absence) reportAbsence(String(domain ?? verification.answer.domain), absence, witnessed, extra);
  else if (verification.signature.valid && log && !log.valid)
    show('invalid', `Not proven: ${log.code}`, [['Reason', log.message]], { claimed: [['Domain', String(verification.answer.domain)]] });
  else report(verification, extra);
}

/** Verifies an answer through the online client (a pasted one, or a plain lookup that sends the domain) and shows its verdict. */
async function check(input: OnlineInput): Promise<void> {
  let verification: AnswerVerification;
  try {
    verification = await verifyOnline(input);
  } catch (error) {
    showFailure(error);
    return;
  }
  render(verification, input.domain);
}

/**
 * A private lookup: only a prefix of the domain's hash is sent; the prefix answer is verified (complete,
 * padded, signed), then the domain's record or absence gets the plain lookup's verdicts.
 */
async function checkPrivately(input: PrivateOnlineInput): Promise<void> {
  let v: Awaited<ReturnType<typeof verifyOnlinePrivately>>;
  try {
    v = await verifyOnlinePrivately(input);
  } catch (error) {
    showFailure(error);
    return;
  }
  // No log proof of its own record (asking for one names the domain): the log step is the build statement's entry.
  const at = v.statement?.valid ? v.statement.statementLog : undefined;
  const lookup: Row[] = [['Lookup', `private: only the hash prefix ${v.prefix ?? '-'} was sent`]];
  if (at) lookup.push(['Log', `build statement: entry ${at.index} of ${at.checkpoint.size} in ${at.checkpoint.origin}`]);
  if (v.verification && v.code === v.verification.code)
    render({ ...v.verification, witnessed: v.verification.witnessed ?? v.witnessed }, input.domain, lookup);
  else if (v.verification)
    // The record's signature held but its build statement (signature, log, witnesses) did not.
    show('invalid', `Not proven: ${v.code}`, [['Reason', `${v.code}: ${v.message}`], ...lookup], { claimed: [['Domain', input.domain]] });
  else show('invalid', `Not verified: ${v.code}`, [['Reason', `${v.code}: ${v.message}`], ...lookup]);
}

/**
 * A pasted bundle (GET /v1/bundle): verified offline by the package, against this origin's key set
 * and, when the bundle carries a statement proof, its log key. Only those public files are fetched.
 */
async function checkBundle(bundle: unknown): Promise<void> {
  let verification: ReturnType<typeof verifyBundle>;
  try {
    const source = origin();
    const logged = typeof (bundle as { statement_proof?: unknown }).statement_proof === 'string';
    const [keySet, vkey] = await Promise.all([source.keySet(), logged ? source.logKey() : undefined]);
    verification = verifyBundle({ bundle, keySet, ...(vkey === undefined ? {} : { log: { vkey: vkey.trim() } }) });
  } catch (error) {
    showFailure(error);
    return;
  }
  const { code, place, statement } = verification;
  const at = statement?.valid ? statement.statementLog : undefined;
  const rows: Row[] = [['Bundle', 'verified offline: nothing key-gated was fetched']];
  if (place?.valid) rows.push(['Place', `leaf ${place.index} of the build's domain map`]);
  if (statement?.valid) rows.push(['Build', `${statement.build}, issued ${statement.issuedAt}`]);
  rows.push([
    'Log',
    at
      ? `build statement: entry ${at.index} of ${at.checkpoint.size} in ${at.checkpoint.origin}`
      : 'not checked: the bundle carries no statement proof',
  ]);
  // A never-audited answer is shown as a proven absence only when every step of the bundle held.
  if (code === null || code === 'NEVER_AUDITED') render(verification, verification.answer.domain, rows);
  else show('invalid', `Not verified: ${code}`, [['Reason', `${code}: ${verdictOf(verification).message}`], ...rows]);
}

$('paste-form').addEventListener('submit', (event) => {
  event.preventDefault();
  let record: unknown;
  try {
    record = JSON.parse(($('record') as HTMLTextAreaElement).value);
  } catch {
    show('error', 'Not verified: not JSON', [['Problem', 'the pasted text is not a JSON record']]);
    return;
  }
  const schema = (record as { schema?: unknown } | null)?.schema;
  if (typeof schema === 'string' && schema.endsWith(BUNDLE_SCHEMA_SUFFIX)) {
    void checkBundle(record);
    return;
  }
  // An absence proof (GET /v1/absence) pasted instead of a record: checked for the domain it names.
  const proof = record as { domain_hash?: unknown; domain?: unknown } | null;
  // Pasted: only the key set is fetched, nothing key-gated.
  const source = { keySet: origin().keySet };
  if (proof && typeof proof.domain_hash === 'string' && typeof proof.domain === 'string')
    void check({ domain: proof.domain, absence: record, source });
  else void check({ answer: record, source });
});

const HOUR_MS = 3_600_000;

/** The maximum age typed, in hours, as ms; undefined when empty. Throws, naming the field, for anything but a positive number. */
function maxAgeOf(text: string): number | undefined {
  if (text === '') return undefined;
  const hours = Number(text);
  if (!Number.isFinite(hours) || hours <= 0) throw new Error(`the maximum age "${text}" is not a positive number of hours`);
  return hours * HOUR_MS;
}

$('lookup-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const typed = ($('domain') as HTMLInputElement).value.trim();
  const key = ($('api-key') as HTMLInputElement).value.trim();
  const policyText = ($('policy') as HTMLTextAreaElement).value.trim();
  const maxAgeText = ($('max-age') as HTMLInputElement).value.trim();
  const privately = ($('private') as HTMLInputElement).checked;
  let input: OnlineInput & { domain: string };
  try {
    // The reader's own policy: a list of witnesses served by the issuer being checked would prove nothing.
    const policy = policyText ? parsePolicy(`${policyText}\n`, 'the witness policy') : undefined;
    const maxAgeMs = maxAgeOf(maxAgeText);
    if (maxAgeMs !== undefined && !policy)
      throw new Error('a maximum age applies to the cosignatures a witness policy asks for: give a policy too');
    // The answer must be for the domain as the service itself normalizes what was typed.
    input = { domain: normalizeDomain(typed), source: origin(key), policy, maxAgeMs };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    show('error', `Not looked up${typeof code === 'string' ? `: ${code}` : ''}`, [['Problem', (error as Error).message]]);
    return;
  }
  if (privately) void checkPrivately(input);
  else void check(input);
});

result.tabIndex = -1;
