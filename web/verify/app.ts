// The verify page's script: verifies a record in the browser with @merchant-verify/verifier's
// online client (the one the CLI and MCP use), against the key set this origin publishes; a domain
// typed is normalized by the service's own rule and, by default, looked up privately: hashed here,
// only its bucket sent (GET /v1/lookup, then GET /v1/lookup/{bits}/{hex}); a pasted bundle is verified offline
// (`verifyBundle`). How a verdict is shown is result.ts's. Bundled for the browser by `npm run build`.
import {
  type AnswerVerification,
  BUNDLE_SCHEMA_SUFFIX,
  gatewaySource,
  type OnlineInput,
  type PrivateOnlineInput,
  parsePolicy,
  verdictOf,
  verifyBundle,
  verifyOnline,
  verifyOnlineCompact,
} from '@merchant-verify/verifier';
import { UsageError } from '../../core/errors/errors.ts';
import { normalizeDomain } from '../../core/rules/domain.ts';
import { DURATION_FORM, parseDuration } from '../../core/rules/duration.ts';
import { $, type Row, render, renderEntry, result, show, showFailure } from './result.ts';

/** This origin: the gateway the page came from, whose key set it checks with. */
const origin = (apiKey?: string) => gatewaySource({ baseUrl: location.origin, ...(apiKey ? { apiKey } : {}) });

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
 * A private lookup: only the bucket of the domain's hash is sent, of the bits the live statement
 * signs; the compact answer is verified (complete, padded, of that statement), then the domain's
 * entry gives its verdict (the record itself is not fetched), or its absence is proven.
 */
async function checkPrivately(input: Omit<PrivateOnlineInput, 'answer'>): Promise<void> {
  let v: Awaited<ReturnType<typeof verifyOnlineCompact>>;
  try {
    v = await verifyOnlineCompact(input);
  } catch (error) {
    showFailure(error);
    return;
  }
  const lookup: Row[] = [['Lookup', `private: only the bucket ${v.bucket ?? '-'} of the domain's hash was sent`]];
  if (v.entry) renderEntry({ ...v, entry: v.entry }, lookup);
  // An absence: its log step is the build statement's entry (asking for a record's own proof would name the domain).
  else if (v.verification) render(v.verification, input.domain, lookup, 'build statement: ');
  else show('invalid', `Not verified: ${v.code}`, [['Reason', `${v.code}: ${v.message}`], ...lookup]);
}

/**
 * A pasted bundle (GET /v1/bundle): verified offline by the package, against this origin's key set
 * and, when the bundle carries a statement proof, its log key, under the reader's witness policy and
 * maximum age when given. Only those public files are fetched.
 */
async function checkBundle(bundle: unknown, witnesses: WitnessChecks): Promise<void> {
  let verification: ReturnType<typeof verifyBundle>;
  try {
    const source = origin();
    const logged = typeof (bundle as { statement_proof?: unknown }).statement_proof === 'string';
    const [keySet, vkey] = await Promise.all([source.keySet(), logged ? source.logKey() : undefined]);
    // The reader's witnesses, as for a lookup: a kept bundle is current only while its quorum's cosignatures are within the maximum age.
    verification = verifyBundle({ bundle, keySet, ...(vkey === undefined ? {} : { log: { vkey: vkey.trim() } }), ...witnesses });
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
    let witnesses: WitnessChecks;
    try {
      witnesses = witnessChecks();
    } catch (error) {
      showUsage('Not verified', error);
      return;
    }
    void checkBundle(record, witnesses);
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

/** The reader's witness policy and maximum age, for a lookup and a pasted bundle alike. */
interface WitnessChecks {
  policy?: ReturnType<typeof parsePolicy>;
  maxAgeMs?: number;
}

/** The witness policy and maximum age typed; throws a coded usage error, naming the field, for either that cannot be read. */
function witnessChecks(): WitnessChecks {
  const policyText = ($('policy') as HTMLTextAreaElement).value.trim();
  // The reader's own policy: a list of witnesses served by the issuer being checked would prove nothing.
  const policy = policyText ? parsePolicy(`${policyText}\n`, 'the witness policy') : undefined;
  const maxAgeMs = maxAgeOf(($('max-age') as HTMLInputElement).value.trim());
  if (maxAgeMs !== undefined && !policy)
    throw new UsageError('a maximum age applies to the cosignatures a witness policy asks for: give a policy too');
  return { ...(policy ? { policy } : {}), ...(maxAgeMs === undefined ? {} : { maxAgeMs }) };
}

/** A usage error shown as the verdict: what the reader typed could not be used. */
function showUsage(what: string, error: unknown): void {
  const code = (error as { code?: unknown }).code;
  show('error', `${what}${typeof code === 'string' ? `: ${code}` : ''}`, [['Problem', (error as Error).message]]);
}

/** The maximum age typed, as ms (the CLI's --max-age syntax: 36h, 2d); undefined when empty. Throws, naming the field, for anything else. */
function maxAgeOf(text: string): number | undefined {
  if (text === '') return undefined;
  const ms = parseDuration(text);
  if (ms === null) throw new UsageError(`the maximum age "${text}" must be ${DURATION_FORM}`);
  return ms;
}

$('lookup-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const typed = ($('domain') as HTMLInputElement).value.trim();
  const key = ($('api-key') as HTMLInputElement).value.trim();
  const privately = ($('private') as HTMLInputElement).checked;
  let input: OnlineInput & { domain: string };
  try {
    const { policy, maxAgeMs } = witnessChecks();
    // The answer must be for the domain as the service itself normalizes what was typed.
    input = { domain: normalizeDomain(typed), source: origin(key), policy, maxAgeMs };
  } catch (error) {
    showUsage('Not looked up', error);
    return;
  }
  if (privately) void checkPrivately(input);
  else void check(input);
});

result.tabIndex = -1;
