import { setImmediate as nextTurn } from 'node:timers/promises';
import type { AbsenceProof, BuildStatement, PacksHead } from '#shared';
import { DomainMap, domainHash, encodeBase64, packCount, packIndexProblem, packsHeadOf, statementLeafSize } from '#shared';
import { hasher, sha256 } from '../core/crypto/hash.ts';
import { verifyRecordNode } from '../core/crypto/signing.ts';
import { HasRecordError, StoreUnavailableError } from '../core/errors/errors.ts';
import { BUILD_STATEMENT_FILE, DOMAIN_MAP_FILE, PACK_INDEX_FILE } from '../core/layout.ts';
import type { CheckKeys } from '../core/rules/key-trust.ts';

/** A build's domain map, checked against the build's signed statement. */
export interface BuildMap {
  build: string;
  statement: BuildStatement;
  map: DomainMap;
  /** The map's leaves as read (the buffer `map` searches). */
  leaves: Uint8Array;
  /** Its packs as the statement signs them: the records, in map order. */
  packs: PacksHead;
}

/** The live build: its checked map, and its pack index (4 bytes a record) checked against the statement's packs. */
export interface ServedBuild extends BuildMap {
  packIndex: Uint8Array;
}

/** Reads a file of one build (its map, its statement), null when the build has none. */
export type BuildFileReader = (name: string) => Promise<Buffer | null>;

/**
 * Loads a build's domain map and statement and checks them before anything is decided by
 * them: the statement verifies by the record scheme against the trusted keys of the key set served
 * (unsigned only when the gateway was told to serve unsigned builds), names the build expected (when the store
 * names one), and its map head is the root and size of the leaves read. A build whose map or
 * statement is missing or does not check is refused whole (STORE_UNAVAILABLE): never served as
 * "every domain never audited". With `rereadKeySet`, a statement naming a key the key set does not
 * hold is checked once more against the key set read again.
 */
export async function loadBuildMap(
  read: BuildFileReader,
  keys: CheckKeys,
  expectedBuild: string | null,
  where: string,
  rereadKeySet?: () => Promise<CheckKeys>,
): Promise<BuildMap> {
  const [statementBytes, leaves] = await Promise.all([read(BUILD_STATEMENT_FILE), read(DOMAIN_MAP_FILE)]);
  const statement = await checkStatementBytes(statementBytes, keys, expectedBuild, where, rereadKeySet);
  return checkMapOf(statement, leaves, expectedBuild, where);
}

/**
 * The first half of {@link loadBuildMap}, for a reader that must check the statement before it
 * reads anything else (a mirror): the statement verifies against the trusted keys and names the
 * build expected. STORE_UNAVAILABLE, naming why, when it does not.
 */
export async function checkStatementBytes(
  statementBytes: Buffer | null,
  keys: CheckKeys,
  expectedBuild: string | null,
  where: string,
  rereadKeySet?: () => Promise<CheckKeys>,
): Promise<BuildStatement> {
  const refuse = refusal(expectedBuild, where);
  if (!statementBytes)
    throw refuse(`it has no ${BUILD_STATEMENT_FILE} (built before domain maps, or not copied whole; build and publish again)`);
  let statement: BuildStatement;
  try {
    statement = JSON.parse(statementBytes.toString('utf8')) as BuildStatement;
  } catch {
    throw refuse(`${BUILD_STATEMENT_FILE} is not JSON`);
  }
  let verdict = verifyRecordNode(statement, keys.keySet);
  // A build and its key set are swapped a moment apart: a statement naming a key this key set
  // lacks (or lists before its endorsement) may be ahead of it (a rotation), so the key set is read once more before deciding.
  if (!verdict.valid && (verdict.code === 'UNKNOWN_KEY' || verdict.code === 'KEY_NOT_TRUSTED') && rereadKeySet) {
    keys = await rereadKeySet();
    verdict = verifyRecordNode(statement, keys.keySet);
  }
  const problem = statementProblem(verdict, keys);
  if (problem) throw refuse(problem);
  if (typeof statement.build !== 'string' || (expectedBuild !== null && statement.build !== expectedBuild))
    throw refuse(`${BUILD_STATEMENT_FILE} is the statement of build ${JSON.stringify(statement.build)}`);
  return statement;
}

/**
 * The second half of {@link loadBuildMap}: the domain map of a checked statement, its leaves sorted
 * without duplicates and their root and size the ones the statement signs, and the statement's
 * packs as many as its domains make. STORE_UNAVAILABLE, naming why, when they are not.
 */
export async function checkMapOf(
  statement: BuildStatement,
  leaves: Buffer | null,
  expectedBuild: string | null,
  where: string,
): Promise<BuildMap> {
  const refuse = refusal(expectedBuild, where);
  if (!leaves) throw refuse(`it has no ${DOMAIN_MAP_FILE} (built before domain maps, or not copied whole; build and publish again)`);
  // The schema says the map's leaves: entries (v2), or domain hashes (v1, builds kept from before entries).
  const leafSize = statementLeafSize(statement.schema);
  if (leafSize === null) throw refuse(`${BUILD_STATEMENT_FILE} has schema ${JSON.stringify(statement.schema)}, not a build statement's`);
  let map: DomainMap;
  try {
    map = await DomainMap.fromLeaves(hasher, leaves, { leafSize, pause: () => nextTurn() });
  } catch (error) {
    throw refuse(`${DOMAIN_MAP_FILE}: ${(error as Error).message}`);
  }
  const head = map.head();
  if (statement.domain_map?.size !== head.size || statement.domain_map?.root !== head.root) {
    throw refuse(
      `${DOMAIN_MAP_FILE} (${head.size} domains, root ${head.root}) is not the map its statement signs (${statement.domain_map?.size} domains, root ${statement.domain_map?.root})`,
    );
  }
  const packs = packsHeadOf(statement);
  if (packs === null)
    throw refuse(
      `${BUILD_STATEMENT_FILE} names no packs (made before builds were packed, which this gateway reads records from; build it again and publish it)`,
    );
  if (typeof packs === 'string') throw refuse(`${BUILD_STATEMENT_FILE}: ${packs}`);
  if (packCount(head.size, packs.records_per_pack) !== packs.files.length)
    throw refuse(
      `${BUILD_STATEMENT_FILE} names ${packs.files.length} packs, not the ${packCount(head.size, packs.records_per_pack)} its ${head.size} domains make`,
    );
  return { build: statement.build, statement, map, leaves, packs };
}

/** A build refused whole: the store's problem (STORE_UNAVAILABLE), never "never audited". */
const refusal = (expectedBuild: string | null, where: string) => (why: string) =>
  new StoreUnavailableError(`build ${expectedBuild ?? `at ${where}`} refused: ${why}`);

/**
 * Loads the build to serve: its map and statement as {@link loadBuildMap} checks them, and its
 * pack index, read with them and checked against the statement's packs (4 bytes a record, offsets
 * rising within each pack, each pack ending at the length the statement signs). The index itself
 * is not signed: a wrong range within a pack fails the record's own checks.
 */
export async function loadServedBuild(
  read: BuildFileReader,
  keys: CheckKeys,
  expectedBuild: string | null,
  where: string,
  rereadKeySet?: () => Promise<CheckKeys>,
): Promise<ServedBuild> {
  const index = read(PACK_INDEX_FILE);
  // Awaited below, after the map: a rejection meanwhile is not unhandled.
  index.catch(() => undefined);
  const m = await loadBuildMap(read, keys, expectedBuild, where, rereadKeySet);
  const packIndex = await index;
  const refuse = (why: string) => new StoreUnavailableError(`build ${m.build} refused: ${why}`);
  if (!packIndex) throw refuse(`it has no ${PACK_INDEX_FILE} (not copied whole; build and publish again)`);
  const problem = packIndexProblem(packIndex, m.packs, m.map.size);
  if (problem) throw refuse(`${PACK_INDEX_FILE} does not match its statement's packs: ${problem}`);
  return { ...m, packIndex };
}

/** Why a statement's verdict refuses its build, or null: unsigned passes only when the gateway serves unsigned builds. */
export function statementProblem(verdict: ReturnType<typeof verifyRecordNode>, keys: CheckKeys): string | null {
  if (verdict.valid || (verdict.code === 'UNSIGNED' && keys.unsigned)) return null;
  return `${BUILD_STATEMENT_FILE} does not verify: ${verdict.code} (${verdict.message})${trustHint(verdict)}`;
}

/** What the operator can do about a signature by a key not trusted, or a build not signed. */
export function trustHint(verdict: ReturnType<typeof verifyRecordNode>): string {
  if (verdict.valid) return '';
  if (verdict.code === 'UNSIGNED') return '; unsigned builds are served only with --unsigned (MVR_UNSIGNED)';
  return verdict.code === 'KEY_NOT_TRUSTED'
    ? `; endorse key ${verdict.keyId} with "mvr keygen" from a trusted key, or pin it (--trusted-keys)`
    : '';
}

/** Whether a normalized domain has a record in the build. */
export function hasRecord(m: BuildMap, domain: string): boolean {
  return m.map.has(domainHash(sha256, domain));
}

/** The proof that a normalized domain has no record in the build; HAS_RECORD when it has one. */
export function absenceProof(m: BuildMap, domain: string): AbsenceProof {
  const hash = domainHash(sha256, domain);
  if (m.map.has(hash)) throw new HasRecordError(domain, m.build);
  return { domain, domain_hash: encodeBase64(hash), statement: m.statement, ...m.map.neighbours(hash) };
}

/**
 * The maps of kept builds other than the live one, loaded when first asked for and kept while
 * they fit in `maxBytes` (least recently used dropped first): a history request asks every kept
 * build, and a map read from a bucket should not be fetched for each request.
 */
export class KeptMaps {
  private readonly maps = new Map<string, Promise<BuildMap>>();
  private readonly sizes = new Map<string, number>();

  constructor(private readonly maxBytes: number) {}

  get(key: string, load: () => Promise<BuildMap>): Promise<BuildMap> {
    const known = this.maps.get(key);
    if (known) {
      this.maps.delete(key);
      this.maps.set(key, known);
      return known;
    }
    const pending = load();
    this.maps.set(key, pending);
    pending.then(
      (m) => {
        this.sizes.set(key, m.leaves.length);
        this.evict(key);
      },
      () => this.maps.get(key) === pending && this.maps.delete(key),
    );
    return pending;
  }

  private evict(keep: string): void {
    let total = [...this.sizes.values()].reduce((a, b) => a + b, 0);
    for (const key of this.maps.keys()) {
      if (total <= this.maxBytes) return;
      if (key === keep || !this.sizes.has(key)) continue;
      total -= this.sizes.get(key)!;
      this.sizes.delete(key);
      this.maps.delete(key);
    }
  }
}
