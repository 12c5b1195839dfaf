/**
 * Packs: a build's records as a few hundred immutable files. Records are in the domain map's
 * order (SHA-256 of the normalized domain, ascending), each its exact signed bytes and a newline,
 * so a pack is JSON Lines; pack k holds the map's leaves [k·r, (k+1)·r) for the build's
 * `records_per_pack` r. The build statement names every pack by the SHA-256 of its bytes and its
 * length, so a pack read from anywhere is checked against the signed statement alone. Nothing here
 * imports `node:`: the build writes packs with the code a mirror checks them with.
 */

/** Every pack holds at least this many records (but the last), so small builds are one pack. */
export const PACK_RECORDS_MIN = 4096;
/** A build has at most this many packs: the statement, carried in every absence proof, stays small. */
export const PACKS_MAX = 256;

/** One pack as the statement names it. */
export interface PackFile {
  /** SHA-256 of the pack's bytes, lowercase hex: also its name (`packs/<sha256>.jsonl`). */
  sha256: string;
  /** The pack's length in bytes. */
  bytes: number;
}

/** What a build statement says about its packs (`packs`), signed with the rest. */
export interface PacksHead {
  /** Records in every pack but the last: pack k holds the map's leaves [k·r, (k+1)·r). */
  records_per_pack: number;
  /** Every pack, in map order. */
  files: PackFile[];
}

/** Records a pack holds in a build of `size` records: {@link PACK_RECORDS_MIN}, or more so there are at most {@link PACKS_MAX} packs. */
export function recordsPerPackFor(size: number): number {
  return Math.max(PACK_RECORDS_MIN, Math.ceil(size / PACKS_MAX));
}

/** The packs a build of `size` records has with `recordsPerPack` records in each (0 for an empty build). */
export function packCount(size: number, recordsPerPack: number): number {
  return Math.ceil(size / recordsPerPack);
}

/** A pack's path inside its build: `packs/<sha256>.jsonl`. */
export function packPath(sha256: string): string {
  return `packs/${sha256}.jsonl`;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * A statement's `packs`, checked against the build's record count: every pack named by a
 * SHA-256, lengths whole numbers, as many packs as the count and `records_per_pack` make. Null
 * when the statement has none (a build made before packs); a string naming the problem when it is
 * malformed.
 */
export function packsHeadOf(statement: unknown): PacksHead | null | string {
  if (typeof statement !== 'object' || statement === null) return 'the statement is not an object';
  const s = statement as { packs?: unknown; records?: unknown };
  if (s.packs === undefined) return null;
  const p = s.packs as { records_per_pack?: unknown; files?: unknown } | null;
  if (typeof p !== 'object' || p === null) return 'packs: not an object';
  const perPack = p.records_per_pack;
  if (!Number.isSafeInteger(perPack) || (perPack as number) < 1) return 'packs.records_per_pack: not a whole number above 0';
  if (!Array.isArray(p.files)) return 'packs.files: not an array';
  const records = s.records;
  if (!Number.isSafeInteger(records) || (records as number) < 0) return 'records: not a whole number';
  const expected = packCount(records as number, perPack as number);
  if (p.files.length !== expected)
    return `packs.files: ${p.files.length} packs, but ${records} records at ${perPack} a pack make ${expected}`;
  for (const [i, f] of p.files.entries()) {
    const { sha256, bytes } = (f ?? {}) as { sha256?: unknown; bytes?: unknown };
    if (typeof sha256 !== 'string' || !SHA256_HEX.test(sha256)) return `packs.files[${i}].sha256: not 64 lowercase hex digits`;
    if (!Number.isSafeInteger(bytes) || (bytes as number) < 0) return `packs.files[${i}].bytes: not a whole number`;
  }
  return { records_per_pack: perPack as number, files: p.files as PackFile[] };
}

/** Where record `index` (its place in the domain map) is: its pack's number and the range of its bytes, without the newline. */
export interface RecordPlace {
  pack: number;
  start: number;
  length: number;
}

/**
 * Where the record at map index `index` is, from the pack index (`pack-index`: for every record
 * in map order, a big-endian u32, the offset just past its newline in its pack). The index is
 * not signed: a record read from a wrong range fails its own checks (its signature, its domain),
 * so a bad index can make a record unavailable but never make one up.
 */
export function recordPlace(packIndex: Uint8Array, recordsPerPack: number, index: number): RecordPlace {
  const view = new DataView(packIndex.buffer, packIndex.byteOffset, packIndex.byteLength);
  const pack = Math.floor(index / recordsPerPack);
  const start = index % recordsPerPack === 0 ? 0 : view.getUint32((index - 1) * 4);
  const end = view.getUint32(index * 4);
  return { pack, start, length: Math.max(0, end - start - 1) };
}

/** The pack index's bytes for records whose lines end at `ends` (each the offset just past its newline in its pack, in map order). */
export function packIndexBytes(ends: Uint32Array): Uint8Array {
  const bytes = new Uint8Array(ends.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < ends.length; i++) view.setUint32(i * 4, ends[i]!);
  return bytes;
}

/**
 * Checks a pack index against the statement's packs: 4 bytes a record, offsets rising within each
 * pack, each pack's last offset its length. A string naming the first problem, or null.
 */
export function packIndexProblem(packIndex: Uint8Array, head: PacksHead, records: number): string | null {
  if (packIndex.byteLength !== records * 4) return `it is ${packIndex.byteLength} bytes, not 4 for each of ${records} records`;
  const view = new DataView(packIndex.buffer, packIndex.byteOffset, packIndex.byteLength);
  let previous = 0;
  for (let i = 0; i < records; i++) {
    if (i % head.records_per_pack === 0) previous = 0;
    const end = view.getUint32(i * 4);
    if (end <= previous) return `record ${i}'s offset ${end} does not follow ${previous}`;
    previous = end;
    const last = i === records - 1 || (i + 1) % head.records_per_pack === 0;
    const pack = Math.floor(i / head.records_per_pack);
    if (last && end !== head.files[pack]!.bytes)
      return `pack ${pack} ends at ${end}, but the statement says it is ${head.files[pack]!.bytes} bytes`;
  }
  return null;
}

/** The records of a pack's bytes: each line without its newline (a pack's last byte is a newline, or it is empty). */
export function splitPack(pack: Uint8Array): Uint8Array[] | string {
  const records: Uint8Array[] = [];
  let start = 0;
  for (let i = pack.indexOf(0x0a); i !== -1; i = pack.indexOf(0x0a, start)) {
    if (i === start) return `an empty line at byte ${i}`;
    records.push(pack.subarray(start, i));
    start = i + 1;
  }
  if (start !== pack.length) return 'it does not end with a newline';
  return records;
}
