// The verify page's script: verifies a record in the browser with @merchant-verify/verifier,
// against the key set this origin publishes. Bundled for the browser by `npm run build`.
import {
  type AbsenceResult,
  isNeverAudited,
  KEY_SET_PATH,
  parsePolicy,
  type VerifyAnswerInput,
  verifyAnswer,
  type Witnessed,
} from '@merchant-verify/verifier';

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

async function keySet(): Promise<unknown> {
  const res = await fetch(KEY_SET_PATH, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`the key set could not be fetched (${res.status})`);
  return res.json();
}

/** The row saying when the proof's checkpoint was last witnessed (with a policy only). */
function witnessedRows(witnessed: Witnessed | null): Row[] {
  if (!witnessed) return [];
  const at = witnessed.witnessedAt === null ? 'not asked for (quorum none)' : new Date(witnessed.witnessedAt).toISOString();
  return [['Last witnessed', `${at}${witnessed.cosigners.length ? ` by ${witnessed.cosigners.map((c) => c.witness).join(', ')}` : ''}`]];
}

function report(
  r: Record<string, unknown>,
  verification: { valid: boolean; code?: string; staleness: unknown },
  witnessed: Witnessed | null,
): void {
  const text = (v: unknown) => (v === null || v === undefined ? '-' : String(v));
  const staleness = verification.staleness as { state?: string; ageDays?: number | null } | undefined;
  const rows: Row[] = [
    ['Domain', text(r.domain)],
    ['Key', text(r.key_id)],
    ['Status', text(r.status)],
    ['Tier', text(r.tier)],
    ['Score', text(r.score)],
    ['Last audited', text(r.last_audited_at)],
    [
      'Staleness',
      staleness ? `${text(staleness.state)}${typeof staleness.ageDays === 'number' ? `, ${staleness.ageDays} days` : ''}` : '-',
      staleness?.state === 'overdue' ? 'warn' : undefined,
    ],
    ...witnessedRows(witnessed),
  ];
  if (verification.valid) {
    const overdue = staleness?.state === 'overdue';
    show(
      'valid',
      'Valid signature',
      rows,
      overdue ? { note: 'Warning: the monthly re-audit is overdue; this record may no longer describe the shop.', warn: true } : {},
    );
  } else {
    show('invalid', `Not verified: ${verification.code}`, [['Reason', verification.code ?? '-']], {
      note: 'The signature did not verify, so nothing this record says is established.',
      claimed: rows,
    });
  }
}

/** A never-audited answer, with its absence proof checked: proven only when the proof holds. */
function reportAbsence(domain: string, absence: AbsenceResult, witnessed: Witnessed | null): void {
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
      ],
      {
        note: `${domain} has no record in build ${absence.build}, issued ${absence.issuedAt}: it was never audited. This is not a verification of the shop.`,
      },
    );
  } else {
    show('invalid', `Absence not proven: ${absence.code}`, [
      ['Reason', absence.message],
      ['Domain', domain],
    ]);
  }
}

/**
 * Verifies an answer with the key set of this origin, and shows it: a never-audited answer by its
 * absence proof, a record by its signature.
 */
async function check(input: Omit<VerifyAnswerInput, 'keySet'>): Promise<void> {
  try {
    const verification = verifyAnswer({ ...input, keySet: await keySet() });
    const { absence, log, witnessed } = verification;
    if (absence) reportAbsence(String(input.domain ?? verification.answer.domain), absence, witnessed);
    else if (verification.signature.valid && log && !log.valid)
      show('invalid', `Not proven: ${log.code}`, [['Reason', log.message]], { claimed: [['Domain', String(verification.answer.domain)]] });
    else report(verification.answer, verification.signature, witnessed);
  } catch (error) {
    show('error', 'Could not verify', [['Problem', (error as Error).message]]);
  }
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
  // An absence proof (GET /v1/absence) pasted instead of a record: checked for the domain it names.
  const proof = record as { domain_hash?: unknown; domain?: unknown } | null;
  if (proof && typeof proof.domain_hash === 'string' && typeof proof.domain === 'string')
    void check({ domain: proof.domain, absence: { proof: record } });
  else void check({ answer: record });
});

/**
 * The domain a lookup's record must be for. The gateway reduces what was typed to its registrable
 * domain, so the answer's domain must be the host typed or one of its parents; any other answer is
 * checked against the host itself, and so fails with DOMAIN_MISMATCH.
 */
function answeredFor(typed: string, answered: unknown): string | undefined {
  let host: string;
  try {
    host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(typed) ? typed : `https://${typed}`).hostname.replace(/\.$/, '');
  } catch {
    return undefined; // the gateway accepted what the URL parser does not: nothing to compare
  }
  return typeof answered === 'string' && (host === answered || host.endsWith(`.${answered}`)) ? answered : host;
}

$('lookup-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const domain = ($('domain') as HTMLInputElement).value.trim();
  const key = ($('api-key') as HTMLInputElement).value.trim();
  const policyText = ($('policy') as HTMLTextAreaElement).value.trim();
  void (async () => {
    try {
      // The reader's own policy: a list of witnesses served by the issuer being checked would prove nothing.
      const policy = policyText ? parsePolicy(`${policyText}\n`, 'the witness policy') : undefined;
      const res = await fetch(`/v1/verify?domain=${encodeURIComponent(domain)}`, {
        headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
      });
      const body = (await res.json()) as { code?: string; detail?: string; domain?: string };
      if (!res.ok) {
        show('error', `Lookup refused: ${body.code ?? res.status}`, [['Problem', body.detail ?? `the gateway answered ${res.status}`]]);
        return;
      }
      const asked = answeredFor(domain, body.domain);
      if (isNeverAudited(body) && asked !== undefined) {
        // "Never audited" holds only with the build's proof of it, never on the gateway's word.
        const proof = await fetch(`/v1/absence?domain=${encodeURIComponent(asked)}`, {
          headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
        });
        const answer = (await proof.json()) as { code?: string; detail?: string };
        if (!proof.ok)
          show('invalid', `Absence not proven: ${answer.code ?? proof.status}`, [
            ['Problem', answer.detail ?? `the gateway answered ${proof.status}`],
          ]);
        else await check({ answer: body, domain: asked, absence: { proof: answer }, policy });
        return;
      }
      await check({ answer: body, domain: asked, policy, log: policy && (await logProof(key, String(body.domain))) });
    } catch (error) {
      show('error', 'Lookup failed', [['Problem', (error as Error).message]]);
    }
  })();
});

/** A record's log proof and the log's key, from this gateway: what a witness policy is checked on. */
async function logProof(key: string, domain: string): Promise<{ proof: string; vkey: string }> {
  const [proof, vkey] = await Promise.all([
    fetch(`/v1/proof?domain=${encodeURIComponent(domain)}`, { headers: { authorization: `Bearer ${key}` } }),
    fetch('/.well-known/merchant-verify-log.vkey'),
  ]);
  if (!proof.ok) throw new Error(`the log proof could not be fetched (${proof.status})`);
  if (!vkey.ok) throw new Error(`the log's key could not be fetched (${vkey.status})`);
  return { proof: await proof.text(), vkey: await vkey.text() };
}

result.tabIndex = -1;
