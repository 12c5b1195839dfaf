/**
 * A private lookup's answer (`GET /v1/lookup/{prefix}`), verified into the one verdict a plain
 * lookup gets: the domain's record, or its proven absence, or a failure code. The prefix answer is
 * checked first (its shape, that it is the prefix of this domain, its padding, that its run of
 * leaves is the map's whole run for the prefix); then the domain's own answer goes through
 * `verifyAnswer`: the record's signature, or the absence proof the run yields, with its statement,
 * log and witness steps. The caller hashes the domain; the gateway never sees it.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import type { Witnessed } from '#shared';
import {
  type AbsenceResult,
  compareHashes,
  decodeHash,
  decodeLeaf,
  domainHash,
  ENTRY_SIZE,
  encodeBase64,
  entryMismatch,
  hexPrefix,
  InvalidArgumentError,
  type LeafSize,
  logTrustOf,
  type PaddedPart,
  ProvenRange,
  paddedPart,
  parseKeySet,
  prefixBounds,
  prefixLengthFor,
  type Sha256,
  type StatementCheckInput,
  shown,
  statementLeafSize,
  stringOf,
  treeHasher,
  type VerifierErrorCode,
  verifyBuildStatement,
  witnessSettingsOf,
} from '#shared';
import { withStatementSteps } from './prefix-record.ts';
import { verdictOf } from './verdict.ts';
import { type AnswerVerification, verifyAnswer } from './verify-answer.ts';

export interface VerifyPrefixInput extends StatementCheckInput {
  /** The normalized domain asked (normalize it with the function the service uses); its hash's prefix is what was sent. */
  domain: string;
  /** The answer to `GET /v1/lookup/{prefix}`, parsed. */
  answer: unknown;
  /** The key set the records and the build statement are checked against. */
  keySet: unknown;
}

export interface PrefixVerification {
  /** null: the record is verified; NEVER_AUDITED: the absence is proven; otherwise the failure's code. */
  code: VerifierErrorCode | null;
  /** Why, when `code` is a failure. */
  message: string | null;
  /** The domain's record, or its never-audited answer; {} when the prefix answer did not hold. */
  answer: Record<string, unknown>;
  /** The verification of the domain's own answer, once the prefix answer held. */
  verification: AnswerVerification | null;
  /** The build statement's steps (signature, log, witnesses) for a record; an absence carries them in `verification.absence`. */
  statement: AbsenceResult | null;
  /** The build the answer is of, once it held. */
  build: string | null;
  /** With `policy`, when the build statement's checkpoint was last witnessed. */
  witnessed: Witnessed | null;
}

type PrefixFailure =
  | 'MALFORMED_PREFIX_ANSWER'
  | 'PREFIX_MISMATCH'
  | 'PADDING_MISMATCH'
  | 'PREFIX_TOO_LONG'
  | 'INCOMPLETE_PREFIX_ANSWER'
  | 'STATEMENT_NOT_SIGNED'
  | 'MALFORMED_ABSENCE_PROOF'
  | 'RECORD_NOT_IN_MAP';

/** The answer's members, decoded; a string saying what is wrong when it is not a prefix answer. */
interface Decoded {
  part: PaddedPart;
  statement: Record<string, unknown>;
  statementProof: unknown;
  prefixLength: number;
  answerBytes: number;
  size: number;
  root: Uint8Array;
  /** 82 for a v2 build (its leaves are entries), 32 for a v1 one. */
  leafSize: LeafSize;
  leaves: Uint8Array[];
  proof: Uint8Array[];
}

/**
 * Builds the prefix verifier around a SHA-256 primitive (the main entry point binds @noble/hashes).
 * Throws only on misuse, as `verifyAnswer` does; every verdict is in the result.
 */
export function createPrefixVerifier(sha256: Sha256) {
  const h = treeHasher(sha256);
  return function verifyPrefixAnswer(input: VerifyPrefixInput): PrefixVerification {
    if (typeof input !== 'object' || input === null)
      throw new InvalidArgumentError('input', 'must be an object: { domain, answer, keySet, ... }');
    const domain = stringOf(input.domain, 'input.domain');
    const settings = witnessSettingsOf(input, 'input');
    const log = input.log === undefined ? undefined : { vkey: logTrustOf(input.log, 'input.log').vkey as string };
    parseKeySet(input.keySet);
    const fail = (code: PrefixFailure, message: string): PrefixVerification => ({
      code,
      message,
      answer: {},
      verification: null,
      statement: null,
      build: null,
      witnessed: null,
    });
    // 1. Shape: every member a prefix answer has, and a statement that says how prefixes are asked.
    const d = decode(input.answer);
    if (typeof d === 'string') return fail('MALFORMED_PREFIX_ANSWER', d);
    // The length: never more than the rule gives for the build's size, so no statement can ask a client for more of its hash.
    if (d.prefixLength > prefixLengthFor(d.size))
      return fail(
        'PREFIX_TOO_LONG',
        `the build asks for ${d.prefixLength} hex digits, but a build of ${d.size} domains has ${prefixLengthFor(d.size)}`,
      );
    // 2. The prefix: this domain's, of the length the build signed (a shorter or longer one is another set).
    const hash = domainHash(sha256, domain);
    const mine = hexPrefix(hash, d.prefixLength);
    if (d.part.prefix !== mine)
      return fail(
        'PREFIX_MISMATCH',
        `the answer is for prefix ${shown(d.part.prefix)}, but ${domain}'s is ${mine} (${d.prefixLength} hex digits in this build)`,
      );
    // 3. The padding: every answer of the build has the size it signed, so the size tells no prefix.
    const bytes = new TextEncoder().encode(paddedPart(d.part)).length;
    if (bytes !== d.answerBytes)
      return fail('PADDING_MISMATCH', `the answer's padded part is ${bytes} bytes, but every answer of this build is ${d.answerBytes}`);
    // 4. Completeness: the run and its neighbours are the map's leaves at their indexes, and nothing with the prefix lies outside.
    const range = ProvenRange.of(h, d.size, d.part.first, d.leaves, d.proof);
    if (!range || compareHashes(range.root, d.root) !== 0)
      return fail('INCOMPLETE_PREFIX_ANSWER', "the leaves and proof do not hash to the signed map's root");
    const run = runOf(d, mine);
    if (typeof run === 'string') return fail('INCOMPLETE_PREFIX_ANSWER', run);
    // 5. The records: one for each leaf of the run, in its order. In a v2 build each is its entry's (its canonical
    // JSON hashes to record_hash, its domain and verdict are the entry's): an answer holds only records its build
    // committed to, so none of them can be a replaced one (an older record of the same domain, still validly signed).
    // A v1 map names no record: there only the asker's is checked to be its leaf's, below.
    if (d.part.records.length !== run.end - run.start)
      return fail('INCOMPLETE_PREFIX_ANSWER', `the run has ${run.end - run.start} leaves, but the answer ${d.part.records.length} records`);
    if (d.leafSize === ENTRY_SIZE)
      for (let i = run.start; i < run.end; i++) {
        const why = entryMismatch(sha256, d.leaves[i]!, d.part.records[i - run.start]);
        if (why) return fail('RECORD_NOT_IN_MAP', `record ${i - run.start} of the answer (leaf ${d.part.first + i}): ${why}`);
      }
    // 6. The domain's own answer, through the one pipeline.
    let at = run.start;
    while (at < run.end && compareHashes(d.leaves[at]!, hash) < 0) at++;
    if (at < run.end && compareHashes(d.leaves[at]!, hash) === 0) {
      const record = d.part.records[at - run.start] as Record<string, unknown>;
      if (record?.domain !== domain)
        return fail('INCOMPLETE_PREFIX_ANSWER', `the record beside ${domain}'s leaf is ${shown(record?.domain)}'s, not ${domain}'s`);
      const statement = verifyBuildStatement(d.statement, d.statementProof, input.keySet, { ...settings, ...(log ? { log } : {}) });
      const own = verifyAnswer({ answer: record, keySet: input.keySet, domain, now: settings.now });
      // A statement that is no signed statement of this key set leaves nothing of the answer standing, as a broken run does.
      if (!statement.valid && !own.code && (statement.code === 'STATEMENT_NOT_SIGNED' || statement.code === 'MALFORMED_ABSENCE_PROOF'))
        return fail(statement.code, statement.message);
      const verification = withStatementSteps(own, statement, log !== undefined || settings.policy !== undefined);
      return {
        code: verification.code,
        message: verification.code === null ? null : verdictOf(verification).message,
        answer: record,
        verification,
        statement,
        build: statement.valid ? statement.build : null,
        witnessed: verification.witnessed,
      };
    }
    // Absent: the leaves around the hash, with the paths the run yields, are its absence proof.
    const neighbour = (i: number) =>
      i < 0 || i >= d.leaves.length
        ? null
        : { index: d.part.first + i, leaf: encodeBase64(d.leaves[i]!), path: range.path(d.part.first + i).map(encodeBase64) };
    const proof = {
      domain,
      domain_hash: encodeBase64(hash),
      statement: d.statement,
      left: neighbour(at - 1),
      right: neighbour(at),
      ...(d.statementProof === undefined ? {} : { statement_proof: d.statementProof }),
    };
    const verification = verifyAnswer({ domain, keySet: input.keySet, absence: { proof }, ...(log ? { log } : {}), ...settings });
    return {
      code: verification.code,
      message: verification.absence && !verification.absence.valid ? verification.absence.message : null,
      answer: verification.answer,
      verification,
      statement: null,
      build: verification.build,
      witnessed: verification.witnessed,
    };
  };
}

/**
 * Verifies a prefix answer (`GET /v1/lookup/{prefix}`) for `domain`: the record the answer holds
 * for it, verified, or its absence, proven; otherwise the code of the check that failed
 * (MALFORMED_PREFIX_ANSWER, PREFIX_MISMATCH, PADDING_MISMATCH, INCOMPLETE_PREFIX_ANSWER, RECORD_NOT_IN_MAP, or a code of
 * the record's or the absence's verification). Throws only on misuse.
 *
 * @example
 *   const hash = sha256(new TextEncoder().encode(domain)); // domain normalized first
 *   const answer = await (await fetch(`${base}/v1/lookup/${hex(hash).slice(0, prefixLength)}`, { headers })).json();
 *   const v = verifyPrefixAnswer({ domain, answer, keySet });
 *   if (v.code === null) console.log('verified', v.answer.status);
 */
export const verifyPrefixAnswer = createPrefixVerifier(sha256);

/** The run of leaves with the prefix, by position in `leaves`: after the left neighbour (when the run is not at the map's start), before the right one. */
function runOf(d: Decoded, prefix: string): { start: number; end: number } | string {
  for (let i = 1; i < d.leaves.length; i++)
    if (compareHashes(d.leaves[i - 1]!, d.leaves[i]!) >= 0) return `the leaves are not in ascending order at ${d.part.first + i}`;
  const { low, high } = prefixBounds(prefix);
  const start = d.leaves.length > 0 && compareHashes(d.leaves[0]!, low) < 0 ? 1 : 0;
  if (d.part.first > 0 && start === 0) return 'the answer does not begin with the leaf before the run';
  let end = start;
  while (end < d.leaves.length && hexPrefix(d.leaves[end]!, prefix.length) === prefix) end++;
  const rest = d.leaves.length - end;
  const atEnd = d.part.first + d.leaves.length === d.size;
  if (rest !== (atEnd ? 0 : 1)) return 'the run is not followed by exactly the leaf after it (or the end of the map)';
  if (rest === 1 && (high === null || compareHashes(d.leaves[end]!, high) < 0)) return 'the leaf after the run is not above the prefix';
  return { start, end };
}

function decode(answer: unknown): Decoded | string {
  if (typeof answer !== 'object' || answer === null) return 'the answer is not a JSON object';
  const a = answer as Record<string, unknown>;
  const { prefix, first, leaves, records, proof, padding, statement } = a;
  if (typeof prefix !== 'string' || !/^[0-9a-f]{1,64}$/.test(prefix)) return 'prefix: not lowercase hex digits';
  if (!Number.isSafeInteger(first) || (first as number) < 0) return 'first: not an index';
  if (!Array.isArray(leaves) || !Array.isArray(proof) || !Array.isArray(records)) return 'leaves, proof and records must be arrays';
  if (typeof padding !== 'string') return 'padding: not a string';
  if (typeof statement !== 'object' || statement === null) return 'statement: not a build statement';
  const s = statement as Record<string, unknown>;
  const leafSize = statementLeafSize(s.schema);
  if (leafSize === null) return 'statement.schema: not a build statement schema (.../schemas/build/v2 or v1)';
  const leafBytes = leaves.map((l) => decodeLeaf(l, leafSize));
  const proofBytes = proof.map(decodeHash);
  if (leafBytes.some((l) => l === null)) return `leaves must be base64 map leaves of ${leafSize} bytes (the statement's schema says so)`;
  if (proofBytes.some((p) => p === null)) return 'proof must be base64 SHA-256 hashes';
  const lookup = s.lookup as { prefix_length?: unknown; answer_bytes?: unknown } | undefined;
  const map = s.domain_map as { size?: unknown; root?: unknown } | undefined;
  const root = decodeHash(map?.root);
  if (!Number.isSafeInteger(map?.size) || !root) return 'statement.domain_map: not {size, root}';
  if (!Number.isSafeInteger(lookup?.prefix_length) || !Number.isSafeInteger(lookup?.answer_bytes) || (lookup!.prefix_length as number) < 1)
    return 'statement.lookup: not {prefix_length, answer_bytes} (a build made before prefix lookups)';
  return {
    part: { prefix, first: first as number, leaves: leaves as string[], records, proof: proof as string[], padding },
    statement: s,
    statementProof: a.statement_proof,
    prefixLength: lookup!.prefix_length as number,
    answerBytes: lookup!.answer_bytes as number,
    size: map!.size as number,
    root,
    leafSize,
    leaves: leafBytes as Uint8Array[],
    proof: proofBytes as Uint8Array[],
  };
}
