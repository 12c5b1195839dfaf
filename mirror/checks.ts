import { hash } from 'node:crypto';
import type { KeySet, TlogPolicy } from '@merchant-verify/verifier';
import {
  type BuildStatement,
  ENTRY_SIZE,
  formatTlogProof,
  type PacksHead,
  parseCheckpoint,
  parseNote,
  splitPack,
  statementEntry,
  statementText,
  verifyBuildStatement,
} from '#shared';
import { hasher, sha256 } from '../core/crypto/hash.ts';
import { type MirrorPlace, MirrorRefusedError, StoreUnavailableError } from '../core/errors/errors.ts';
import { BUILD_CHECKPOINT_FILE, BUILD_STATEMENT_FILE, DOMAIN_MAP_FILE, MANIFEST_FILE, shardOf } from '../core/layout.ts';
import { type CheckKeys, KeyTrust } from '../core/rules/key-trust.ts';
import { parseManifest } from '../core/schemas/manifest.ts';
import { type TileFetch, TileTree } from '../core/tlog/tile-tree.ts';
import { type BuildMap, checkMapOf, checkStatementBytes } from '../service/build-maps.ts';
import { statementInclusion } from '../service/served-checkpoint.ts';
import { type ServeRuleCheck, type ServeRuleTask, serveRuleHere } from './serve-rule-check.ts';
import { signedMapBytes } from './signed-sizes.ts';

// The checks a mirror makes of a build before it goes live, in the order they run: the statement
// (nothing else of the build is read before it verifies), the statement in the log, the map it
// signs (read no further than it signs), then every pack and every record in it. Each is
// the check the service already makes (the build's acceptance, the serve rule, the package's
// statement log check); a failure is MIRROR_REFUSED, naming the pack and the record where it applies.

/** Reads a file of the build being mirrored, of at most `maxBytes` (the limits table's for its kind when not given); null when it has none. */
export type BoundedReader = (name: string, maxBytes?: number) => Promise<Buffer | null>;

/** A statement checked first, before anything else of its build is read: by a trusted key, naming the build asked for. */
export interface SignedStatement {
  build: string;
  statement: BuildStatement;
  /** The statement file's bytes as read and checked: what the mirror writes, never a second read of it. */
  statementBytes: Buffer;
  keys: CheckKeys;
}

/** A build whose statement verified: its map (checked against the statement), its packs, and the keys it was checked with. */
export interface CheckedStatement extends SignedStatement {
  map: BuildMap;
  packs: PacksHead;
}

/**
 * The statement, read alone (bounded by the limits table) and checked before any other file of
 * its build is read: by a trusted key (pinned, or endorsed link by link from a pinned key) and
 * naming the build asked for, as the gateway accepts a build. A file that cannot be read is the
 * source's failure (thrown as it is); a check that fails is MIRROR_REFUSED.
 */
export async function checkStatement(
  read: BoundedReader,
  keySetBytes: Buffer,
  trustedKeys: KeySet,
  build: string,
  where: string,
): Promise<SignedStatement> {
  let keys: CheckKeys;
  try {
    keys = new KeyTrust({ trustedKeys }).check(keySetBytes);
  } catch (error) {
    throw new MirrorRefusedError(`the key set published with build ${build} is not one: ${(error as Error).message}`);
  }
  const statementBytes = await read(BUILD_STATEMENT_FILE);
  const statement = await refusedIf(() => checkStatementBytes(statementBytes, keys, build, where));
  return { build, statement, statementBytes: statementBytes!, keys };
}

/**
 * The domain map the statement signs, read only up to the length it signs (its count of leaves),
 * with its root and size the signed ones and the statement's packs as many as its domains make
 * (`checkMapOf`, the gateway's own check); then its record count, the map's size. MIRROR_REFUSED when a check fails.
 */
export async function checkMap(read: BoundedReader, signed: SignedStatement, where: string): Promise<CheckedStatement> {
  const { statement, build } = signed;
  const leaves = await read(DOMAIN_MAP_FILE, signedMapBytes(statement));
  const map = await refusedIf(() => checkMapOf(statement, leaves, build, where));
  if (map.statement.records !== map.map.size)
    throw new MirrorRefusedError(
      `build ${build} refused: its statement counts ${map.statement.records} records, its domain map ${map.map.size}`,
    );
  return { ...signed, map, packs: map.packs };
}

/** A check of the service's, its refusal (STORE_UNAVAILABLE: a build not served) a mirror's refusal. */
async function refusedIf<T>(check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (error instanceof StoreUnavailableError) throw new MirrorRefusedError(error.message);
    throw error;
  }
}

/** The log the statement must be in: the log key (note form) unless a policy names it, and the policy its checkpoint must hold under. */
export interface LogTrustSettings {
  vkey?: string;
  policy?: TlogPolicy;
  maxAgeMs?: number;
  now?: number;
}

/**
 * The statement in the log: its entry (the checkpoint's last when that is it, else where the manifest says) proven from the log's tiles against
 * the build's checkpoint (its served one when newer, as the gateway serves it), the proof checked by
 * the package's statement log check, and witnessed under the policy when one is given. Returns the
 * proof's text and the statement's index, proven; MIRROR_REFUSED when the build has no entry, no checkpoint, or the proof fails.
 */
export async function checkLogged(
  m: Pick<SignedStatement, 'build' | 'statement'>,
  manifest: Buffer | null,
  checkpoint: string | null,
  tiles: TileFetch,
  keys: CheckKeys,
  log: LogTrustSettings,
): Promise<{ proof: string; index: number }> {
  const refuse = (why: string) => new MirrorRefusedError(`build ${m.build} refused: its statement ${why}`);
  if (!manifest) throw refuse(`cannot be found in the log: the build has no ${MANIFEST_FILE}`);
  let index: number | undefined;
  try {
    index = parseManifest(manifest, `build ${m.build}'s ${MANIFEST_FILE}`).log?.statement;
  } catch (error) {
    throw refuse(`cannot be found in the log: ${(error as Error).message}`);
  }
  if (index === undefined) throw refuse('is not in the log (a build made without a log key, or before statements were logged)');
  if (!checkpoint) throw refuse(`cannot be proven in the log: the build has no ${BUILD_CHECKPOINT_FILE}`);
  let proof: Uint8Array[];
  try {
    const { size, root } = parseCheckpoint(parseNote(checkpoint).text);
    const leaf = hasher.leaf(statementEntry(sha256, Buffer.from(statementText(m.statement))));
    ({ index, proof } = await statementInclusion(new TileTree(hasher, size, tiles), index, root, leaf));
  } catch (error) {
    throw refuse(`cannot be proven in the log: ${(error as Error).message}`);
  }
  const text = formatTlogProof({ extra: null, index, proof, checkpoint });
  const verdict = verifyBuildStatement(m.statement, text, keys.keySet, {
    ...(log.vkey ? { log: { vkey: log.vkey } } : {}),
    ...(log.policy ? { policy: log.policy } : {}),
    ...(log.maxAgeMs ? { maxAgeMs: log.maxAgeMs } : {}),
    ...(log.now ? { now: log.now } : {}),
  });
  if (!verdict.valid) throw refuse(`is not proven in the log${log.policy ? ' and witnessed' : ''}: ${verdict.code} (${verdict.message})`);
  return { proof: text, index };
}

/**
 * The build's manifest, which a mirror serves as the source wrote it (the kept builds' list shows
 * its time, count and key; its log index is proven by {@link checkLogged}): what it says of the
 * build must be what the statement signs. Its counts by status and tier, the keys published and
 * the log's range are not read by the service and are left as they are. MIRROR_REFUSED otherwise.
 */
export function checkManifest(signed: SignedStatement, manifest: Buffer | null): void {
  const { build, statement } = signed;
  const refuse = (why: string) => new MirrorRefusedError(`build ${build} refused: its ${MANIFEST_FILE} ${why}`);
  if (!manifest) throw refuse('is missing');
  let m: ReturnType<typeof parseManifest>;
  try {
    m = parseManifest(manifest, `build ${build}'s ${MANIFEST_FILE}`);
  } catch (error) {
    throw refuse(`is not one: ${(error as Error).message}`);
  }
  const signs = { issuer: statement.issuer, issued_at: statement.issued_at, records: statement.records, key_id: statement.key_id ?? null };
  for (const [member, value] of Object.entries(signs))
    if (m[member as keyof typeof signs] !== value)
      throw refuse(`says ${member} ${JSON.stringify(m[member as keyof typeof signs])}, its statement ${JSON.stringify(value)}`);
}

/** What one pack held, checked: the end offset of each record (for the pack index), and each record with its domain, map index, shard and lookup index line. */
export interface CheckedPack {
  ends: Uint32Array;
  records: { index: number; domain: string; shard: string; bytes: Buffer; line: string }[];
}

/**
 * Pack `k` against the statement and the signed map: its length and SHA-256 those the statement
 * names; it holds as many records as the count puts in it; then each record, by `serveRule` (in
 * this thread, or a pool of workers: ./verify-pool.ts): it has the place its index gives it in the
 * map (SHA-256 of its domain begins leaf `index`, so the records are in ascending hash order and
 * their domains are the map's), and it passes the serve rule (JSON, the record of that domain, in a
 * v2 build the entry of leaf `index` rebuilt from it, the record's shape, a signature by a trusted
 * key). A record out of place is named before one that fails the serve rule; the first is named.
 */
export async function checkPack(
  bytes: Buffer,
  k: number,
  checked: CheckedStatement,
  serveRule: ServeRuleCheck = serveRuleHere(checked.keys),
): Promise<CheckedPack> {
  const { packs, map } = checked;
  const file = packs.files[k]!;
  const pack = { number: k, sha256: file.sha256 };
  const at = `pack ${k} (${file.sha256})`;
  const refuse = (why: string, place: MirrorPlace = {}) => new MirrorRefusedError(`build ${map.build} refused: ${why}`, { pack, ...place });
  if (bytes.length !== file.bytes) throw refuse(`${at} is ${bytes.length} bytes, but the statement says ${file.bytes}`);
  const digest = hash('sha256', bytes);
  if (digest !== file.sha256) throw refuse(`${at} does not hash to its name: its SHA-256 is ${digest}`);
  const records = splitPack(bytes);
  if (typeof records === 'string') throw refuse(`${at} is not one record a line: ${records}`);
  const first = k * packs.records_per_pack;
  const expected = Math.min(packs.records_per_pack, map.map.size - first);
  if (records.length !== expected)
    throw refuse(`${at} holds ${records.length} records, but the statement's count (${map.map.size}) puts ${expected} in it`);
  const ends = Uint32Array.from(records, (r) => r.byteOffset - bytes.byteOffset + r.byteLength + 1);
  const { leafSize } = map.map;
  // The task's leaves are a copy of the pack's own (a view of the map would send all of it), moved to the worker with the ends' copy.
  const leaves = new Uint8Array(leafSize * records.length);
  for (let j = 0; j < records.length; j++) leaves.set(map.map.leaf(first + j), j * leafSize);
  const task: ServeRuleTask = { pack: bytes, ends: ends.slice(), leaves, leafSize, entries: leafSize === ENTRY_SIZE };
  const { bad, domains, lines } = await serveRule(task);
  if (bad) {
    const index = first + bad.at;
    const place = { record: { index, domain: bad.domain } };
    const named = `record ${index}${bad.domain === null ? '' : ` (${bad.domain})`} of ${at}`;
    if (bad.check === 'record') throw refuse(`${named} is not a record: ${bad.message}`, place);
    if (bad.check === 'place')
      throw refuse(`${named} is out of place: SHA-256 of its domain is not leaf ${index} of the signed domain map`, place);
    throw refuse(`${named} does not pass the serve rule: ${bad.message}`, place);
  }
  return {
    ends,
    records: records.map((record, j) => ({
      index: first + j,
      domain: domains[j]!,
      // The leaf begins with the domain's hash (checked above), whose first byte names the record's shard.
      shard: shardOf(map.map.leaf(first + j)),
      bytes: Buffer.from(record.buffer, record.byteOffset, record.byteLength),
      line: lines[j]!,
    })),
  };
}
