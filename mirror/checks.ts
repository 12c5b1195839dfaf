import { hash } from 'node:crypto';
import type { KeySet, TlogPolicy } from '@merchant-verify/verifier';
import { type PacksHead, packsHeadOf, splitPack, verifyBuildStatement } from '@merchant-verify/verifier/internal/issuer';
import { formatTlogProof, parseCheckpoint, parseNote } from '@merchant-verify/verifier/internal/tlog';
import { type MirrorPlace, MirrorRefusedError, RecordUnavailableError } from '../core/errors.ts';
import { hasher } from '../core/hash.ts';
import { type CheckKeys, KeyTrust } from '../core/key-trust.ts';
import { BUILD_CHECKPOINT_FILE, BUILD_STATEMENT_FILE, MANIFEST_FILE } from '../core/layout.ts';
import { parseManifest } from '../core/manifest-schema.ts';
import { type TileFetch, TileTree } from '../core/tlog/tile-tree.ts';
import { type BuildFileReader, type BuildMap, loadBuildMap } from '../service/build-maps.ts';
import { entryAt } from '../service/pack-records.ts';
import { checkServeRule } from '../service/serve-rule.ts';

// The checks a mirror makes of a build before it goes live, in the order they run: the statement
// and the map it signs, the statement in the log, then every pack and every record in it. Each is
// the check the service already makes (the build's acceptance, the serve rule, the package's
// statement log check); a failure is MIRROR_REFUSED, naming the pack and the record where it applies.

/** A build whose statement verified: its map (checked against the statement), its packs, and the keys it was checked with. */
export interface CheckedStatement {
  map: BuildMap;
  /** The statement file's bytes as read and checked: what the mirror writes, never a second read of it. */
  statementBytes: Buffer;
  packs: PacksHead;
  keys: CheckKeys;
}

/**
 * The statement, by a trusted key (pinned, or endorsed link by link from a pinned key), naming the
 * build asked for, and the domain map whose root and size it signs, as the gateway accepts a build
 * (`loadBuildMap`); then its packs, checked against its record count. A file that cannot be read
 * is the source's failure (thrown as it is); a check that fails is MIRROR_REFUSED.
 */
export async function checkStatement(
  read: BuildFileReader,
  keySetBytes: Buffer,
  trustedKeys: KeySet,
  build: string,
  where: string,
): Promise<CheckedStatement> {
  let keys: CheckKeys;
  try {
    keys = new KeyTrust({ trustedKeys }).check(JSON.parse(keySetBytes.toString('utf8')));
  } catch (error) {
    throw new MirrorRefusedError(`the key set published with build ${build} is not one: ${(error as Error).message}`);
  }
  let unread: unknown = null;
  let statementBytes: Buffer | null = null;
  const reading: BuildFileReader = (name) =>
    read(name).then(
      (bytes) => {
        if (name === BUILD_STATEMENT_FILE) statementBytes = bytes;
        return bytes;
      },
      (error: unknown) => {
        unread = error;
        throw error;
      },
    );
  let map: BuildMap;
  try {
    map = await loadBuildMap(reading, keys, build, where);
  } catch (error) {
    if (unread) throw unread;
    throw new MirrorRefusedError((error as Error).message);
  }
  const packs = packsHeadOf(map.statement);
  if (packs === null) throw new MirrorRefusedError(`build ${build} refused: its statement names no packs (made before packs; build again)`);
  if (typeof packs === 'string') throw new MirrorRefusedError(`build ${build} refused: its statement's ${packs}`);
  if (map.statement.records !== map.map.size)
    throw new MirrorRefusedError(
      `build ${build} refused: its statement counts ${map.statement.records} records, its domain map ${map.map.size}`,
    );
  return { map, statementBytes: statementBytes!, packs, keys };
}

/** The log the statement must be in: the log key (note form) unless a policy names it, and the policy its checkpoint must hold under. */
export interface LogTrustSettings {
  vkey?: string;
  policy?: TlogPolicy;
  maxAgeMs?: number;
  now?: number;
}

/**
 * The statement in the log: its entry (where the manifest says) proven from the log's tiles against
 * the build's checkpoint (its served one when newer, as the gateway serves it), the proof checked by
 * the package's statement log check, and witnessed under the policy when one is given. Returns the
 * proof's text; MIRROR_REFUSED when the build has no entry, no checkpoint, or the proof fails.
 */
export async function checkLogged(
  m: BuildMap,
  manifest: Buffer | null,
  checkpoint: string | null,
  tiles: TileFetch,
  keys: CheckKeys,
  log: LogTrustSettings,
): Promise<string> {
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
  let size: number;
  try {
    size = parseCheckpoint(parseNote(checkpoint).text).size;
    proof = await new TileTree(hasher, size, tiles).inclusion(index);
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
  return text;
}

/** What one pack held, checked: the end offset of each record (for the pack index). */
export interface CheckedPack {
  ends: number[];
}

/**
 * Pack `k` against the statement and the signed map: its length and SHA-256 those the statement
 * names; then each record, in order: it has the place its index gives it in the map (SHA-256 of
 * its domain begins leaf `index`, so the records are in ascending hash order and their domains are
 * the map's), and it passes the serve rule (JSON, the record of that domain, in a v2 build the
 * entry of leaf `index` rebuilt from it, the record's shape, a signature by a trusted key); and the pack holds as many records as the count puts in it.
 */
export function checkPack(bytes: Buffer, k: number, checked: CheckedStatement): CheckedPack {
  const { packs, map, keys } = checked;
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
  const ends: number[] = [];
  let end = 0;
  for (const [j, record] of records.entries()) {
    const index = first + j;
    const bytesOf = Buffer.from(record.buffer, record.byteOffset, record.byteLength);
    const domain = domainOf(bytesOf);
    const place = { record: { index, domain } };
    const named = `record ${index}${domain === null ? '' : ` (${domain})`} of ${at}`;
    if (domain === null) throw refuse(`${named} is not a record: not JSON, or no domain`, place);
    // A leaf begins with its domain's hash (v1: is it; v2: the entry the serve rule rebuilds from the record and compares).
    if (!hash('sha256', domain, 'buffer').equals(map.map.leaf(index).subarray(0, 32)))
      throw refuse(`${named} is out of place: SHA-256 of its domain is not leaf ${index} of the signed domain map`, place);
    try {
      checkServeRule(domain, bytesOf, keys, entryAt(map.map, index));
    } catch (error) {
      if (!(error instanceof RecordUnavailableError)) throw error;
      throw refuse(`${named} does not pass the serve rule: ${error.message}`, place);
    }
    end += record.length + 1;
    ends.push(end);
  }
  return { ends };
}

/** The `domain` a record's bytes name, or null when they are not a JSON object naming one. */
function domainOf(bytes: Buffer): string | null {
  try {
    const domain = (JSON.parse(bytes.toString('utf8')) as { domain?: unknown } | null)?.domain;
    return typeof domain === 'string' ? domain : null;
  } catch {
    return null;
  }
}
