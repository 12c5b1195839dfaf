import { type DomainMap, domainHash, ENTRY_SIZE, type PacksHead, packPath, type RecordPlace, recordPlace } from '#shared';
import { sha256 } from '../core/crypto/hash.ts';
import { BuildNotFoundError, RecordUnavailableError } from '../core/errors/errors.ts';
import { MAX_RECORD_BYTES } from '../core/files.ts';
import { MANIFEST_FILE, PACK_INDEX_FILE } from '../core/layout.ts';
import type { Store } from '../storage/store.ts';
import type { ServedBuild } from './build-maps.ts';

/** Reads `length` bytes of a build's file from byte `start`; null when the store has no such file. */
export type RangeReader = (path: string, start: number, length: number) => Promise<Buffer | null>;

// Every record is read the same way, from the live build or a kept one, on every store: the domain
// map gives its place in map order, the pack index (in memory for the live build, 4 or 8 bytes of
// it read for a kept one) the range of its pack, and one ranged read of that pack its bytes.

/** The place of record `index` of the live build, from its pack index in memory. */
export function livePlace(packIndex: Uint8Array, packs: PacksHead, index: number): RecordPlace {
  return recordPlace(packIndex, packs.records_per_pack, index);
}

/**
 * The place of record `index` of a kept build, from the two entries of its pack index around it
 * (one for the first record of a pack): one ranged read of 4 or 8 bytes. Null when the build has
 * no pack index.
 */
export async function storedPlace(read: RangeReader, packs: PacksHead, index: number): Promise<RecordPlace | null> {
  const first = index % packs.records_per_pack === 0;
  const from = first ? index : index - 1;
  const length = first ? 4 : 8;
  const bytes = await read(PACK_INDEX_FILE, from * 4, length);
  if (!bytes) return null;
  if (bytes.length !== length) throw new RecordUnavailableError(`${PACK_INDEX_FILE} ends before record ${index}'s entry`);
  // Entries [from, index] read as a pack index of their own, the record last in it.
  return { ...recordPlace(bytes, first ? 1 : 2, first ? 0 : 1), pack: Math.floor(index / packs.records_per_pack) };
}

/**
 * The bytes of a record at `place`, read as one range of its pack: at most 64 KiB, within the pack
 * as the statement signs its length. Null when the pack is not there. A range that the pack does
 * not hold, or that the store answers short, is UNAVAILABLE; what the bytes are is for the serve
 * rule to decide (a wrong range never makes up a record: it fails the record's own checks).
 */
export async function readPlaced(read: RangeReader, packs: PacksHead, place: RecordPlace, domain: string): Promise<Buffer | null> {
  const file = packs.files[place.pack];
  if (!file)
    throw new RecordUnavailableError(`the record of ${domain} is in pack ${place.pack}, which the build's statement does not name`);
  const path = packPath(file.sha256);
  if (place.length > MAX_RECORD_BYTES)
    throw new RecordUnavailableError(
      `the record of ${domain} (${path}) has ${place.length} bytes, more than the ${MAX_RECORD_BYTES} a record may have`,
    );
  if (place.start + place.length + 1 > file.bytes)
    throw new RecordUnavailableError(`the record of ${domain} is placed past the end of ${path} (${file.bytes} bytes)`);
  // An empty range is no record; the serve rule says so without a read.
  if (place.length === 0) return Buffer.alloc(0);
  const bytes = await read(path, place.start, place.length);
  if (bytes === null) return null;
  if (bytes.length !== place.length)
    throw new RecordUnavailableError(`${path} ends before the record of ${domain} (${bytes.length} of its ${place.length} bytes)`);
  return bytes;
}

/** Where the live build's map puts a domain (its entry with it, in a v2 build); UNAVAILABLE when the map does not list it. */
export function livePosition(served: ServedBuild, domain: string): Position {
  const { found, index } = served.map.search(domainHash(sha256, domain));
  if (!found) throw new RecordUnavailableError(`${domain} is not in the live build's domain map`);
  return { index, packs: served.packs, packIndex: served.packIndex, entry: entryAt(served.map, index) };
}

/** The entry a map commits record `index` to: its leaf in a v2 map; null in a v1 map, whose leaves name no record. */
export function entryAt(map: DomainMap, index: number): Uint8Array | null {
  return map.leafSize === ENTRY_SIZE ? map.leaf(index) : null;
}

/** A live record's bytes as stored, at its position: one ranged read of its pack (null: the pack is not there). */
export function readLiveRecord(store: Pick<Store, 'readLiveRange'>, at: Position, domain: string): Promise<Buffer | null> {
  const place = livePlace(at.packIndex!, at.packs, at.index);
  return readPlaced((path, start, length) => store.readLiveRange(path, start, length), at.packs, place, domain);
}

/** A record the live build's map lists whose pack is not there: UNAVAILABLE, never "never audited". */
export function missingFromLive(domain: string): RecordUnavailableError {
  return new RecordUnavailableError(
    `the record of ${domain} is missing from the live build (its pack is not there), though its map lists it`,
  );
}

/** A record's bytes as stored, with the entry its build's map commits it to (null in a v1 build). */
export interface StoredRecord {
  bytes: Buffer;
  entry: Uint8Array | null;
}

/** Where a build's map puts a domain: its record's place in map order, with the build's packs (and the pack index, for the live build). */
export interface Position {
  index: number;
  packs: PacksHead;
  packIndex: Uint8Array | null;
  /** The entry the map commits the record to (v2), which the serve rule checks it against; null in a v1 build. */
  entry: Uint8Array | null;
}

/**
 * The record of a domain its build's map lists, read from the build's packs: its place from the
 * pack index (in memory for the live build, 4 or 8 bytes of it for a kept one), then one range of
 * its pack. Missing, it is UNAVAILABLE (the map says it is there), unless the build was pruned
 * meanwhile (BUILD_NOT_FOUND).
 */
export async function readBuildRecord(
  store: Pick<Store, 'readRange' | 'readFile'>,
  build: string,
  at: Position,
  domain: string,
): Promise<Buffer> {
  const read: RangeReader = (path, start, length) => store.readRange(build, path, start, length);
  const place = at.packIndex ? livePlace(at.packIndex, at.packs, at.index) : await storedPlace(read, at.packs, at.index);
  const bytes = place && (await readPlaced(read, at.packs, place, domain));
  if (bytes) return bytes;
  if (!(await store.readFile(build, MANIFEST_FILE))) throw new BuildNotFoundError(build);
  throw new RecordUnavailableError(
    `the record of ${domain} is missing from build ${build} (its pack or pack index is not there), though the build's domain map lists it`,
  );
}
