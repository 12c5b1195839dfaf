/**
 * A compact private answer (`GET /v1/lookup/{bits}/{hex}`) verified against the build statement the
 * caller fetched first (`GET /v1/lookup`): the domain's verdict from its map entry, or its proven
 * absence, or a failure code. The statement and its log proof come beside the answer, never in it:
 * the answer binds to them by the map root it names.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import {
  type AbsenceResult,
  bucketBitsFor,
  bucketBounds,
  bucketOf,
  type CompactAnswer,
  compareHashes,
  decodeBase64,
  decodeCompactAnswer,
  decodeMapEntry,
  domainHash,
  ENTRY_SIZE,
  encodeBase64,
  entryMismatch,
  formatTimestamp,
  InvalidArgumentError,
  logTrustOf,
  ProvenRange,
  paddingMismatch,
  parseKeySet,
  type Sha256,
  type StatementCheckInput,
  statementHead,
  stringOf,
  treeHasher,
  type VerifierErrorCode,
  verifyBuildStatement,
  type Witnessed,
  witnessSettingsOf,
} from '#shared';
import { type AnswerVerification, verifyAnswer } from './verify-answer.ts';

export interface VerifyCompactInput extends StatementCheckInput {
  /** The normalized domain asked; only its bucket was sent. */
  domain: string;
  /** The answer's bytes, exactly as served. */
  answer: Uint8Array;
  /** The live build statement (`GET /v1/lookup`'s `statement`), from which the bucket's bits were taken. */
  statement: unknown;
  /** Its entry in the transparency log (`GET /v1/lookup`'s `statement_proof`), when the log is checked. */
  statementProof?: unknown;
  keySet: unknown;
}

/** The verdict a map entry gives a domain: what its record says, and the hash the full record must have. */
export interface EntryVerdict {
  domain: string;
  status: string;
  tier: string | null;
  score: number | null;
  next_audit_at: string | null;
  /** SHA-256 of the record's exact bytes, base64: check a record fetched later with {@link recordMatchesEntry}. */
  record_hash: string;
  /** The 82-byte entry, base64. */
  entry: string;
}

export interface CompactVerification {
  /** null: the domain's entry is proven its build's; NEVER_AUDITED: its absence is; otherwise the failure's code. */
  code: VerifierErrorCode | null;
  message: string | null;
  /** The domain's entry, once proven. */
  entry: EntryVerdict | null;
  /** The build statement's steps (signature, log, witnesses) behind an entry. */
  statement: AbsenceResult | null;
  /** For an absent domain, the absence's verification through the one pipeline. */
  verification: AnswerVerification | null;
  build: string | null;
  witnessed: Witnessed | null;
}

type CompactFailure =
  | 'MALFORMED_PREFIX_ANSWER'
  | 'PREFIX_MISMATCH'
  | 'PREFIX_TOO_LONG'
  | 'PADDING_MISMATCH'
  | 'INCOMPLETE_PREFIX_ANSWER'
  | 'RECORD_NOT_IN_MAP';

/** Builds the compact verifier around a SHA-256 primitive; throws only on misuse. */
export function createCompactVerifier(sha: Sha256) {
  const h = treeHasher(sha);
  return function verifyCompactAnswer(input: VerifyCompactInput): CompactVerification {
    if (typeof input !== 'object' || input === null)
      throw new InvalidArgumentError('input', 'must be an object: { domain, answer, statement, keySet, ... }');
    const domain = stringOf(input.domain, 'input.domain');
    if (!(input.answer instanceof Uint8Array)) throw new InvalidArgumentError('input.answer', "must be the answer's bytes (a Uint8Array)");
    const settings = witnessSettingsOf(input, 'input');
    const log = input.log === undefined ? undefined : { vkey: logTrustOf(input.log, 'input.log').vkey as string };
    parseKeySet(input.keySet);
    const fail = (code: CompactFailure | AbsenceFailure, message: string): CompactVerification => ({
      code,
      message,
      entry: null,
      statement: null,
      verification: null,
      build: null,
      witnessed: null,
    });
    // 1. The statement: signed by the key set (and logged, witnessed, current when asked): everything else is checked against it.
    const statement = verifyBuildStatement(input.statement, input.statementProof, input.keySet, { ...settings, ...(log ? { log } : {}) });
    if (!statement.valid) return fail(statement.code, statement.message);
    const head = statementHead(input.statement)!;
    const lookup = (input.statement as { lookup?: { bits?: unknown; bucket_bytes?: unknown } }).lookup;
    if (head.leafSize !== ENTRY_SIZE || !Number.isSafeInteger(lookup?.bits) || !Number.isSafeInteger(lookup?.bucket_bytes))
      return fail('MALFORMED_PREFIX_ANSWER', 'the build statement has no compact lookups (lookup.bits, lookup.bucket_bytes of a v2 build)');
    const bits = lookup!.bits as number;
    // 2. The bits: never more than the rule gives for the build's size, so no gateway or statement can draw out more of the hash.
    if (bits < 1 || bits > bucketBitsFor(head.size))
      return fail(
        'PREFIX_TOO_LONG',
        `the statement asks for ${bits} bits, but a build of ${head.size} domains has ${bucketBitsFor(head.size)}`,
      );
    // 3. Size and shape: every answer of the build is the size it signed.
    if (input.answer.length !== lookup!.bucket_bytes)
      return fail(
        'PADDING_MISMATCH',
        `the answer is ${input.answer.length} bytes, but every answer of this build is ${lookup!.bucket_bytes}`,
      );
    const a = decodeCompactAnswer(input.answer, head.size);
    if (typeof a === 'string') return fail('MALFORMED_PREFIX_ANSWER', a);
    // 4. Of this statement, for this domain's bucket.
    if (compareHashes(a.root, head.root) !== 0) return fail('PREFIX_MISMATCH', "the answer names another map root than the statement's");
    const hash = domainHash(sha, domain);
    const mine = bucketOf(hash, bits);
    if (a.bits !== bits || a.bucket !== mine)
      return fail('PREFIX_MISMATCH', `the answer is for bucket ${a.bucket} of ${a.bits} bits, but ${domain}'s is ${mine} of ${bits}`);
    // 5. Completeness: the entries and proof hash to the signed root, and the run is the bucket's whole run.
    const range = ProvenRange.of(h, head.size, a.first, a.entries, a.proof);
    if (!range || compareHashes(range.root, head.root) !== 0)
      return fail('INCOMPLETE_PREFIX_ANSWER', "the entries and proof do not hash to the signed map's root");
    const run = runOf(a, head.size);
    if (typeof run === 'string') return fail('INCOMPLETE_PREFIX_ANSWER', run);
    // 6. The padding: the bytes the root, the bucket and the proven entries give, so it hides nothing and tells nothing.
    const at = paddingMismatch(sha, input.answer, a);
    if (at !== null) return fail('PADDING_MISMATCH', `the answer's padding differs from its derived bytes at byte ${at}`);
    // 7. The domain's entry, or its absence from the neighbours around its hash.
    let i = run.start;
    while (i < run.end && compareHashes(a.entries[i]!, hash) < 0) i++;
    const witnessed =
      statement.witnessedAt === undefined ? null : { witnessedAt: statement.witnessedAt, cosigners: statement.cosigners ?? [] };
    if (i < run.end && compareHashes(a.entries[i]!, hash) === 0) {
      const entry = decodeMapEntry(a.entries[i]!);
      if (!entry) return fail('RECORD_NOT_IN_MAP', `${domain}'s entry holds a status or tier no record has`);
      const code = (log !== undefined || settings.policy !== undefined) && !statement.statementLog ? 'STATEMENT_NOT_LOGGED' : null;
      return {
        code,
        message: code ? 'the build statement was not proven in the log' : null,
        entry: {
          domain,
          status: entry.status,
          tier: entry.tier,
          score: entry.score,
          next_audit_at: entry.nextAuditAt === null ? null : formatTimestamp(entry.nextAuditAt),
          record_hash: encodeBase64(entry.recordHash),
          entry: encodeBase64(a.entries[i]!),
        },
        statement,
        verification: null,
        build: statement.build,
        witnessed,
      };
    }
    const neighbour = (n: number) =>
      n < 0 || n >= a.entries.length
        ? null
        : { index: a.first + n, leaf: encodeBase64(a.entries[n]!), path: range.path(a.first + n).map(encodeBase64) };
    const proof = {
      domain,
      domain_hash: encodeBase64(hash),
      statement: input.statement,
      left: neighbour(i - 1),
      right: neighbour(i),
      ...(input.statementProof === undefined ? {} : { statement_proof: input.statementProof }),
    };
    const verification = verifyAnswer({ domain, keySet: input.keySet, absence: { proof }, ...(log ? { log } : {}), ...settings });
    return {
      code: verification.code,
      message: verification.absence && !verification.absence.valid ? verification.absence.message : null,
      entry: null,
      statement,
      verification,
      build: verification.build,
      witnessed: verification.witnessed,
    };
  };
}

type AbsenceFailure = Extract<AbsenceResult, { valid: false }>['code'];

/**
 * Verifies a compact answer for `domain` against the statement fetched before it: the domain's
 * entry (its status, tier, score and next audit, and the hash its full record must have) proven
 * its build's, or its absence proven; otherwise the failing check's code (MALFORMED_PREFIX_ANSWER,
 * PREFIX_TOO_LONG, PREFIX_MISMATCH, PADDING_MISMATCH, INCOMPLETE_PREFIX_ANSWER, RECORD_NOT_IN_MAP,
 * or the statement's or absence's). Throws only on misuse.
 *
 * @example
 *   const { statement, statement_proof } = await (await fetch(`${base}/v1/lookup`, { headers })).json();
 *   const bits = statement.lookup.bits; // the bucket: bucketHex(bucketOf(sha256(domain), bits), bits)
 *   const answer = new Uint8Array(await (await fetch(`${base}/v1/lookup/${bits}/${hex}`, { headers })).arrayBuffer());
 *   const v = verifyCompactAnswer({ domain, answer, statement, statementProof: statement_proof, keySet });
 */
export const verifyCompactAnswer = createCompactVerifier(sha256);

/**
 * Whether a full record (fetched later: a mirror, or a plain lookup by a caller who accepts naming
 * the domain) is the one a proven entry commits to: null when it is, else why not
 * (RECORD_NOT_IN_MAP). `bytes` are the record's exact bytes as served, when at hand.
 */
export function recordMatchesEntry(
  entry: EntryVerdict,
  record: unknown,
  bytes?: Uint8Array,
): { code: 'RECORD_NOT_IN_MAP'; message: string } | null {
  const leaf = decodeBase64(entry.entry);
  const why = leaf ? entryMismatch(sha256, leaf, record, bytes) : 'the entry is not base64';
  return why === null ? null : { code: 'RECORD_NOT_IN_MAP', message: why };
}

/** The run of entries in the bucket, by position in `entries`: after the left neighbour (unless at the map's start), before the right one. */
function runOf(a: CompactAnswer, size: number): { start: number; end: number } | string {
  const e = a.entries;
  for (let i = 1; i < e.length; i++)
    if (compareHashes(e[i - 1]!, e[i]!) >= 0) return `the entries are not in ascending order at ${a.first + i}`;
  const { low, high } = bucketBounds(a.bucket, a.bits);
  const start = e.length > 0 && compareHashes(e[0]!, low) < 0 ? 1 : 0;
  if (a.first > 0 && start === 0) return 'the answer does not begin with the entry before the bucket';
  let end = start;
  while (end < e.length && bucketOf(e[end]!, a.bits) === a.bucket && compareHashes(e[end]!, low) >= 0) end++;
  const rest = e.length - end;
  const atEnd = a.first + e.length === size;
  if (rest !== (atEnd ? 0 : 1)) return 'the bucket is not followed by exactly the entry after it (or the end of the map)';
  if (rest === 1 && (high === null || compareHashes(e[end]!, high) < 0)) return 'the entry after the bucket is not above it';
  return { start, end };
}
