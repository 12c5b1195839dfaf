/**
 * One offline bundle (`GET /v1/bundle?domain=`) verified into the one verdict the other paths give,
 * as a short ordered pipeline that reads top to bottom: the bundle's shape; the domain asked; the
 * record's signature, or the never-audited answer's absence proof; the record's place in the
 * statement's domain map; the statement (signed, in the log, witnessed). Nothing is fetched: a shop
 * that kept a bundle checks it as of the time it kept it (`now`).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import {
  type AbsenceResult,
  BUNDLE_SCHEMA_SUFFIX,
  canonicalJson,
  decodeHash,
  decodeLeaf,
  InvalidArgumentError,
  leafMismatch,
  logTrustOf,
  parseKeySet,
  type StatementCheckInput,
  shown,
  statementLeafSize,
  stringOf,
  treeHasher,
  type VerifierErrorCode,
  verifyBuildStatement,
  verifyInclusion,
  witnessSettingsOf,
} from '#shared';
import { type AnswerVerification, isNeverAudited, verifyAnswer } from './verify-answer.ts';

export interface VerifyBundleInput extends StatementCheckInput {
  /** The bundle, parsed (`GET /v1/bundle`, or a file a shop kept). */
  bundle: unknown;
  /** The normalized domain asked; defaults to the bundle's. A bundle of another domain fails with DOMAIN_MISMATCH. */
  domain?: string;
  /** The key set the record and the build statement are checked against. */
  keySet: unknown;
}

/** The place step: the record's leaf is at its index of the statement's map, and is the record's. */
export type PlaceResult = { valid: true; index: number } | { valid: false; code: 'RECORD_NOT_IN_MAP'; message: string };

/**
 * A bundle's verification: the answer's (signature, or absence proof) as {@link verifyAnswer} gives
 * it, and the bundle's own steps. `code` is the first step that failed, in pipeline order; NEVER_AUDITED
 * when every step held for a never-audited answer; null when every step held for a record.
 */
export interface BundleVerification extends AnswerVerification {
  /** The place step, for a record; null for a never-audited answer, or when an earlier step failed. */
  place: PlaceResult | null;
  /** The statement step (signature, log, witnesses); null when an earlier step failed. */
  statement: AbsenceResult | null;
  /**
   * Null unless the bundle itself is malformed or of another domain, or (online, `verifyOnline`) its
   * record is not the answer being verified: then why.
   */
  bundle: { code: 'MALFORMED_BUNDLE' | 'DOMAIN_MISMATCH' | 'BUNDLE_MISMATCH'; message: string } | null;
}

const h = treeHasher(sha256);

/**
 * Verifies an offline bundle. In order: its shape; that it answers the domain asked; the record's
 * signature (`verifyRecord`) or, for a never-audited answer, its absence proof (`verifyAbsence`,
 * the map step); that the record's leaf is at `place.index` of the statement's domain map and is the
 * record's; that the statement is signed and, with `log` or `policy`, proven in the log by
 * `statement_proof` and witnessed (`verifyBuildStatement`). Throws only on misuse; every verdict is in
 * the result, and `verdictOf` states it as every other path does.
 *
 * @example
 *   const bundle = JSON.parse(await readFile('shop.example.bundle.json', 'utf8'));
 *   const v = verifyBundle({ bundle, domain: 'shop.example', keySet, log: { vkey }, now: Date.parse('2026-12-01T00:00:00Z') });
 *   const { valid, code } = verdictOf(v);
 */
export function verifyBundle(input: VerifyBundleInput): BundleVerification {
  if (typeof input !== 'object' || input === null) throw new InvalidArgumentError('input', 'must be an object: { bundle, keySet, ... }');
  // Options at the door: a malformed one is misuse, thrown, never a verdict and never a pass.
  const settings = witnessSettingsOf(input, 'input');
  const log = input.log === undefined ? undefined : { vkey: logTrustOf(input.log, 'input.log').vkey as string };
  const asked = input.domain === undefined ? undefined : stringOf(input.domain, 'input.domain');
  parseKeySet(input.keySet);
  // 1. Shape: every member, and an absence proof about the very statement the bundle carries.
  const b = bundleOf(input.bundle);
  if (typeof b === 'string') return refused(input.bundle, 'MALFORMED_BUNDLE', b, settings.now, input.keySet);
  // 2. The domain: a bundle of another domain says nothing of this one.
  if (asked !== undefined && b.domain !== asked)
    return refused(input.bundle, 'DOMAIN_MISMATCH', `the bundle is about ${shown(b.domain)}, not ${asked}`, settings.now, input.keySet);
  // 3. The answer: the record's signature, or the never-audited answer's absence proof in the map (its log is step 5's).
  const neverAudited = isNeverAudited(b.record);
  const answer = verifyAnswer({
    answer: b.record,
    keySet: input.keySet,
    domain: b.domain,
    now: settings.now,
    ...(neverAudited ? { absence: { proof: b.absence } } : {}),
  });
  const answered = answer.code === null || answer.code === 'NEVER_AUDITED';
  // 4. The place: the record is the one the build's map commits to, at its index.
  const place = answered && !neverAudited ? placeStep(b) : null;
  // 5. The statement: signed, and with a log key or a policy, in the log and witnessed.
  const statement =
    answered && (place === null || place.valid)
      ? verifyBuildStatement(b.statement, b.statement_proof ?? undefined, input.keySet, {
          policy: settings.policy,
          maxAgeMs: settings.maxAgeMs,
          now: settings.now,
          ...(settings.trustedCheckpoint === undefined ? {} : { trustedCheckpoint: settings.trustedCheckpoint }),
          ...(log ? { log } : {}),
        })
      : null;
  const code: VerifierErrorCode | null = !answered
    ? answer.code
    : place && !place.valid
      ? place.code
      : statement && !statement.valid
        ? statement.code
        : answer.code;
  return {
    ...answer,
    code,
    place,
    statement,
    bundle: null,
    build: statement?.valid ? statement.build : null,
    witnessed:
      statement?.valid && statement.witnessedAt !== undefined
        ? { witnessedAt: statement.witnessedAt, cosigners: statement.cosigners ?? [] }
        : null,
  };
}

interface CheckedBundle {
  domain: string;
  record: Record<string, unknown>;
  place: { index: number; leaf: Uint8Array; path: Uint8Array[] } | null;
  absence: Record<string, unknown> | null;
  statement: Record<string, unknown>;
  statement_proof: string | null;
}

/** The bundle's members, checked for shape; a string saying what is wrong when it is not a bundle. */
function bundleOf(bundle: unknown): CheckedBundle | string {
  if (typeof bundle !== 'object' || bundle === null || Array.isArray(bundle)) return 'the bundle is not a JSON object';
  const { schema, domain, record, place, absence, statement, statement_proof: proof } = bundle as Record<string, unknown>;
  if (typeof schema !== 'string' || !schema.endsWith(BUNDLE_SCHEMA_SUFFIX))
    return `schema: not a bundle's (ending in ${BUNDLE_SCHEMA_SUFFIX})`;
  if (typeof domain !== 'string') return 'domain: not a string';
  if (!isObject(record)) return 'record: not a JSON object';
  if (!isObject(statement)) return 'statement: not a JSON object';
  if (proof !== null && typeof proof !== 'string') return 'statement_proof: not a tlog-proof text or null';
  const neverAudited = isNeverAudited(record);
  if (neverAudited ? place !== null : absence !== null)
    return neverAudited ? 'place: a never-audited answer has no place in the map' : 'absence: a record has no absence proof';
  if (neverAudited) {
    if (!isObject(absence)) return 'absence: a never-audited answer needs its absence proof';
    // The absence proof is of the statement the bundle carries, against the same log proof: one build, proven once.
    if (!sameJson(absence.statement, statement)) return "absence.statement: not the bundle's statement";
    if (absence.statement_proof !== undefined && absence.statement_proof !== proof)
      return "absence.statement_proof: not the bundle's statement_proof";
    return { domain, record, place: null, absence, statement, statement_proof: proof };
  }
  if (!isObject(place)) return 'place: a record needs its place in the map, {index, leaf, path}';
  const { index, leaf, path } = place;
  // The leaf is as long as the statement's schema says (v1: the domain's hash; v2: the record's entry).
  const leafSize = statementLeafSize((statement as { schema?: unknown }).schema);
  const leafBytes = leafSize === null ? null : decodeLeaf(leaf, leafSize);
  const hashes = Array.isArray(path) && path.length <= 64 ? path.map(decodeHash) : null;
  if (!Number.isSafeInteger(index) || (index as number) < 0 || !leafBytes || !hashes || hashes.some((p) => p === null))
    return 'place: not {index, leaf, path} (an index, a leaf of the size the statement says, and base64 SHA-256 hashes)';
  return {
    domain,
    record,
    place: { index: index as number, leaf: leafBytes, path: hashes as Uint8Array[] },
    absence: null,
    statement,
    statement_proof: proof,
  };
}

/** The record's leaf, at its index of the statement's map, is the record's ({@link leafMismatch}: one comparison). */
function placeStep(b: CheckedBundle): PlaceResult {
  const place = b.place!;
  const map = b.statement.domain_map as { size?: unknown; root?: unknown } | undefined;
  const root = decodeHash(map?.root);
  const size = map?.size;
  if (!root || !Number.isSafeInteger(size))
    return { valid: false, code: 'RECORD_NOT_IN_MAP', message: 'the statement has no domain_map {size, root} to place the record in' };
  const mismatch = leafMismatch(sha256, place.leaf, b.record);
  if (mismatch !== null)
    return { valid: false, code: 'RECORD_NOT_IN_MAP', message: `place.leaf is not ${shown(b.record.domain)}'s record's: ${mismatch}` };
  if (
    place.index >= (size as number) ||
    !verifyInclusion(h, { size: size as number, root }, { index: place.index, hash: h.leaf(place.leaf) }, place.path)
  )
    return {
      valid: false,
      code: 'RECORD_NOT_IN_MAP',
      message: `the record's leaf is not leaf ${place.index} of the signed map (${shown(size)} leaves)`,
    };
  return { valid: true, index: place.index };
}

/** A bundle refused before its answer was judged: the record's steps did not run. */
function refused(
  bundle: unknown,
  code: 'MALFORMED_BUNDLE' | 'DOMAIN_MISMATCH',
  message: string,
  now: number,
  keySet: unknown,
): BundleVerification {
  const record = (bundle as { record?: unknown } | null)?.record;
  const answer = verifyAnswer({ answer: isObject(record) ? record : {}, keySet, now });
  return { ...answer, code, place: null, statement: null, bundle: { code, message }, build: null, witnessed: null };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether two JSON values are the same value (their canonical text); false for what canonical JSON cannot express. */
export function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
}
