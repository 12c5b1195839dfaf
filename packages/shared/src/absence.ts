/**
 * Build statements and absence proofs: what a build says about itself (signed with the record
 * key, by the record scheme), and how anyone checks that a domain has no record in a build.
 * Portable: the primitives are passed in, as for records and log proofs.
 */

import { canonicalJson } from './canonical.ts';
import { behindTrusted, openTrustedCheckpoint, supersededIn } from './current.ts';
import { compareHashes, type DomainMapHead, decodeHash, decodeLeaf, domainHash, type LeafSize, type MapNeighbour } from './domain-map.ts';
import type { VerifierErrorCode } from './errors.ts';
import type { KeySet } from './keyset.ts';
import { ENTRY_SIZE, HASH_LEAF_SIZE } from './map-entry.ts';
import { shown } from './options.ts';
import type { PacksHead } from './packs.ts';
import type { LookupHead } from './prefix.ts';
import { encodeBase64 } from './tlog/base64.ts';
import type { Checkpoint } from './tlog/checkpoint.ts';
import { createStatementProofVerifier, type LogKeys, type LogTrust, logKeysOf } from './tlog/log-proof.ts';
import { type Sha256, treeHasher, verifyInclusion } from './tlog/merkle.ts';
import type { Witnessed } from './tlog/witnessed.ts';
import { createNoteEd25519, createRecordVerifier, type Ed25519Verify } from './verify.ts';

/**
 * The statement's schema address, beside the record's: `https://{issuer}/schemas/build/v2`, a
 * map whose leaves are entries (82 bytes). Builds made before say `/schemas/build/v1`, a map of
 * domain hashes (32 bytes), and keep verifying as they did.
 */
export const STATEMENT_SCHEMA_SUFFIX = '/schemas/build/v2';

/** The schema suffixes a verifier accepts, and the leaf size of each one's map. */
const SCHEMA_LEAF_SIZES: ReadonlyArray<readonly [string, LeafSize]> = [
  ['/schemas/build/v1', HASH_LEAF_SIZE],
  [STATEMENT_SCHEMA_SUFFIX, ENTRY_SIZE],
];

/** The leaf size of the map a statement's schema names (32 for v1, 82 for v2); null for any other schema. */
export function statementLeafSize(schema: unknown): LeafSize | null {
  if (typeof schema !== 'string') return null;
  return SCHEMA_LEAF_SIZES.find(([suffix]) => schema.endsWith(suffix))?.[1] ?? null;
}

/** What a build says about itself; signed members `key_id` and `signature` are added by the signer. */
export interface BuildStatement {
  schema: string;
  issuer: string;
  build: string;
  issued_at: string;
  records: number;
  domain_map: DomainMapHead;
  /** Private lookups of this build (`bits` and `bucket_bytes`: `GET /v1/lookup/{bits}/{hex}`); absent from builds made before them. */
  lookup?: LookupHead;
  /** The build's records as packs; absent from builds made before them. */
  packs?: PacksHead;
  key_id?: string;
  signature?: string;
}

/**
 * The unsigned statement of a build: schema v2, its map's leaves entries, unless `leafSize` says
 * 32 (a v1 statement, as builds made before entries have, which the v1 vectors are written with).
 */
export function buildStatement(o: {
  issuer: string;
  build: string;
  issuedAt: string;
  map: DomainMapHead;
  lookup?: LookupHead;
  packs?: PacksHead;
  leafSize?: LeafSize;
}): BuildStatement {
  const suffix = SCHEMA_LEAF_SIZES.find(([, size]) => size === (o.leafSize ?? ENTRY_SIZE))![0];
  return {
    schema: `https://${o.issuer}${suffix}`,
    issuer: o.issuer,
    build: o.build,
    issued_at: o.issuedAt,
    records: o.map.size,
    domain_map: o.map,
    ...(o.lookup ? { lookup: o.lookup } : {}),
    ...(o.packs ? { packs: o.packs } : {}),
  };
}

/**
 * The statement file's exact text: the statement's RFC 8785 canonical JSON and a newline. The
 * build writes the file so, and its log entry hashes these bytes; a verifier rebuilds them from
 * the statement an absence proof carries (canonical JSON read and written again is the same text).
 */
export function statementText(statement: BuildStatement): string {
  return `${canonicalJson(statement)}\n`;
}

/** `GET /v1/absence`: why a domain has no record in a build. */
export interface AbsenceProof {
  domain: string;
  domain_hash: string;
  statement: BuildStatement;
  left: MapNeighbour | null;
  right: MapNeighbour | null;
  /** The statement's entry in the log: a C2SP tlog-proof without `extra`, against the build's checkpoint; absent for builds made before statements were logged. */
  statement_proof?: string;
}

/** Why an absence proof does not hold. Stable codes. */
export type AbsenceFailureCode = Extract<
  VerifierErrorCode,
  | 'MALFORMED_ABSENCE_PROOF' // not the shape of a proof, or a proof about another domain
  | 'STATEMENT_NOT_SIGNED' // the build statement does not verify against the key set (unsigned included)
  | 'NOT_ABSENT' // the neighbours do not enclose the domain's hash, are not adjacent, or are not in the signed map
  | 'STATEMENT_NOT_LOGGED' // with the log's key (or a policy's): statement_proof missing, malformed, of another log, or not including the statement
  | 'BUILD_SUPERSEDED' // with the log's key: the statement is not the last entry of its checkpoint (a later build was logged), unless the answer is about the kept build asked for (`asOfBuild`)
  | 'LOG_ORIGIN_MISMATCH' // with a trusted checkpoint: the statement proof's checkpoint is of another origin
  | 'LOG_INCONSISTENT' // with a trusted checkpoint: the statement proof's checkpoint has its size and another root
  | 'LOG_KEY_MISSING' // a witness policy without a log line, and no log key: the statement's log proof could not be checked
  // With a witness policy (the main entry point's `verifyAbsence`), the checkpoint of the statement's log proof:
  | 'CHECKPOINT_NOT_SIGNED' // not signed by a log of the policy
  | 'LOG_ORIGIN_MISMATCH' // of a log the policy does not list
  | 'BAD_COSIGNATURE' // a cosignature by one of its witnesses does not verify
  | 'NOT_WITNESSED' // short of the quorum of valid, timely cosignatures
>;

export type AbsenceResult =
  // With the log's key, where the statement is in the log (`statementLog`); with a witness policy, when the
  // build's checkpoint was last witnessed.
  | ({
      valid: true;
      build: string;
      issuedAt: string;
      keyId: string;
      size: number;
      statementLog?: { index: number; checkpoint: Checkpoint };
    } & Partial<Witnessed>)
  | { valid: false; code: AbsenceFailureCode; message: string };

/** The members of a statement a proof relies on, checked, with its map's leaf size; null when one is missing or malformed. */
export function statementHead(s: unknown): { build: string; issuedAt: string; size: number; root: Uint8Array; leafSize: LeafSize } | null {
  if (typeof s !== 'object' || s === null) return null;
  const { build, issued_at: issuedAt, schema, domain_map: map } = s as Record<string, unknown>;
  const leafSize = statementLeafSize(schema);
  if (typeof build !== 'string' || typeof issuedAt !== 'string' || leafSize === null) return null;
  if (typeof map !== 'object' || map === null) return null;
  const { size, root } = map as Record<string, unknown>;
  const rootBytes = decodeHash(root);
  if (!Number.isSafeInteger(size) || (size as number) < 0 || !rootBytes) return null;
  return { build, issuedAt, size: size as number, root: rootBytes, leafSize };
}

function neighbourOf(n: unknown, leafSize: LeafSize): { index: number; leaf: Uint8Array; path: Uint8Array[] } | null | undefined {
  if (n === null) return null;
  if (typeof n !== 'object' || n === undefined) return undefined;
  const { index, leaf, path } = n as Record<string, unknown>;
  const leafBytes = decodeLeaf(leaf, leafSize);
  if (!Number.isSafeInteger(index) || (index as number) < 0 || !leafBytes || !Array.isArray(path) || path.length > 64) return undefined;
  const hashes = path.map(decodeHash);
  if (hashes.some((p) => p === null)) return undefined;
  return { index: index as number, leaf: leafBytes, path: hashes as Uint8Array[] };
}

/**
 * Builds the absence verifier around SHA-256 and Ed25519 primitives. In order: the proof's
 * shape; that it is about the domain asked for; that the build statement verifies by the record
 * scheme against the key set; that the neighbours enclose the domain's hash; that they are
 * adjacent leaves (or the first or last, or the map is empty); that each path proves its leaf at
 * its index under the statement's root and size. Freshness is the caller's policy, from `issuedAt`.
 */
export function createAbsenceVerifier(sha256: Sha256, ed25519Verify: Ed25519Verify) {
  const h = treeHasher(sha256);
  const verifyStatement = createRecordVerifier(ed25519Verify);
  const statementLogged = createStatementLogCheck(sha256, ed25519Verify);
  return function verifyAbsence(
    proof: unknown,
    domain: string,
    keySet: KeySet,
    log?: LogTrust | LogKeys,
    currency: StatementCurrency = {},
  ): AbsenceResult {
    const fail = (code: AbsenceFailureCode, message: string): AbsenceResult => ({ valid: false, code, message });
    // 1. Shape, and the domain: a proof of another domain's absence says nothing of this one.
    if (typeof proof !== 'object' || proof === null) return fail('MALFORMED_ABSENCE_PROOF', 'the proof is not a JSON object');
    const p = proof as Record<string, unknown>;
    const hash = domainHash(sha256, domain);
    if (p.domain !== domain) return fail('MALFORMED_ABSENCE_PROOF', `the proof is about ${shown(p.domain)}, not ${domain}`);
    if (p.domain_hash !== encodeBase64(hash)) return fail('MALFORMED_ABSENCE_PROOF', 'domain_hash is not SHA-256 of the domain');
    const head = statementHead(p.statement);
    if (!head)
      return fail(
        'MALFORMED_ABSENCE_PROOF',
        `statement: not a build statement (schema ending in ${STATEMENT_SCHEMA_SUFFIX} or /schemas/build/v1, build, issued_at, domain_map {size, root})`,
      );
    // A neighbour's leaf is of the statement's map: a hash (v1) or an entry (v2), ordered by its domain hash either way.
    const left = neighbourOf(p.left, head.leafSize),
      right = neighbourOf(p.right, head.leafSize);
    if (left === undefined || right === undefined)
      return fail('MALFORMED_ABSENCE_PROOF', `left and right must each be null or {index, leaf (${head.leafSize} bytes), path}`);
    // 2. The statement: signed by a key of the set, by exactly the record scheme.
    const signed = verifyStatement(p.statement, keySet);
    if (!signed.valid) return fail('STATEMENT_NOT_SIGNED', `the build statement does not verify: ${signed.code} (${signed.message})`);
    // 3. Order: left < hash < right, so the domain would sit between them.
    if (left && compareHashes(left.leaf, hash) >= 0) return fail('NOT_ABSENT', "the left neighbour is not below the domain's hash");
    if (right && compareHashes(hash, right.leaf) >= 0) return fail('NOT_ABSENT', "the right neighbour is not above the domain's hash");
    // 4. Adjacency: nothing can sit between them.
    if (!left && !right && head.size !== 0) return fail('NOT_ABSENT', `no neighbours given, but the map has ${head.size} leaves`);
    if (!left && right && right.index !== 0) return fail('NOT_ABSENT', 'no left neighbour, but the right one is not the first leaf');
    if (left && !right && left.index !== head.size - 1)
      return fail('NOT_ABSENT', 'no right neighbour, but the left one is not the last leaf');
    if (left && right && right.index !== left.index + 1) return fail('NOT_ABSENT', 'the neighbours are not adjacent leaves');
    // 5. Inclusion: each neighbour is the leaf at its index of the signed map.
    for (const [side, n] of [
      ['left', left],
      ['right', right],
    ] as const) {
      if (n && !verifyInclusion(h, head, { index: n.index, hash: h.leaf(n.leaf) }, n.path))
        return fail('NOT_ABSENT', `the ${side} neighbour is not leaf ${n.index} of the signed map`);
    }
    const proven = { valid: true as const, build: head.build, issuedAt: head.issuedAt, keyId: signed.keyId, size: head.size };
    // 6. With the log's key: the statement is in the log, as every build's is, so this build was shown to everyone.
    return log ? statementLogged(p, proven, log, currency) : proven;
  };
}

/**
 * Whether an answer must be of the newest build: `asOfBuild` names the kept build (`build=`, history)
 * an answer is asked about, which skips the rule; `trustedCheckpoint`, a checkpoint note the caller
 * trusts, which the statement proof's checkpoint must not be behind.
 */
export interface StatementCurrency {
  asOfBuild?: string | undefined;
  trustedCheckpoint?: string | undefined;
}

/**
 * The log step of an absence proof: its `statement_proof` proves the statement's entry (SHA-256
 * of the prefix and the statement file's bytes, rebuilt by {@link statementText}) at its index
 * under a checkpoint signed by the log's key, of its origin. Every failure of the proof is
 * STATEMENT_NOT_LOGGED, naming the log proof's own code. Then the statement must be the
 * checkpoint's last entry, unless it is of `currency.asOfBuild` (BUILD_SUPERSEDED otherwise, see
 * current.ts), and the checkpoint no older than `currency.trustedCheckpoint` when given.
 */
export function createStatementLogCheck(sha256: Sha256, ed25519Verify: Ed25519Verify) {
  const noteEd25519 = createNoteEd25519(ed25519Verify);
  const verifyStatementProof = createStatementProofVerifier(sha256, noteEd25519);
  return (
    p: Record<string, unknown>,
    proven: AbsenceResult & { valid: true },
    log: LogTrust | LogKeys,
    currency: StatementCurrency = {},
  ): AbsenceResult => {
    const notLogged = (message: string): AbsenceResult => ({ valid: false, code: 'STATEMENT_NOT_LOGGED', message });
    if (typeof p.statement_proof !== 'string')
      return notLogged('the absence proof has no statement_proof (a build made before statements were logged, or without a log key)');
    const bytes = new TextEncoder().encode(statementText(p.statement as BuildStatement));
    const logged = verifyStatementProof(bytes, p.statement_proof, log);
    if (!logged.valid) return notLogged(`statement_proof: ${logged.code} (${logged.message})`);
    const superseded = supersededIn(logged.index, logged.checkpoint, proven.build, currency.asOfBuild);
    if (superseded) return superseded;
    if (currency.trustedCheckpoint !== undefined) {
      const trusted = openTrustedCheckpoint(currency.trustedCheckpoint, logKeysOf(sha256, log).keys, noteEd25519);
      const behind = behindTrusted(logged.checkpoint, trusted);
      if (behind) return behind;
    }
    return { ...proven, statementLog: { index: logged.index, checkpoint: logged.checkpoint } };
  };
}
