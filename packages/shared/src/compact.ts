/**
 * Compact private answers (`GET /v1/lookup/{bits}/{hex}`): for one bucket of the domain map (the
 * domains whose hash begins with the same `bits` bits), the map's entries themselves (82 bytes a
 * domain, what the build's map commits to) rather than the records, with the range proof that they
 * are all of the bucket. Every answer of a build is one size and is written once by the build:
 *
 * | bytes | member |
 * |---|---|
 * | 0-3 | `mvl1` |
 * | 4 | bits of the bucket |
 * | 5-8 | the bucket: its first `bits` bits, as an unsigned integer |
 * | 9-12 | map index of the first entry |
 * | 13-14 | entries of the run, with the neighbour just below and just above it where there is one |
 * | 15 | hashes of the range proof |
 * | 16-47 | the map's root: the answer binds to the one signed statement that names it |
 * | 48- | `capacity` entry slots, then `maxRangeProof(size)` hash slots |
 *
 * Slots past the run and past the proof are padding that looks like what it pads: dummy entries
 * (two hashes from a counter-mode SHA-256 stream over the root and the bucket, and the verdict bytes
 * of a real entry of the same answer) and dummy hashes. Compression shrinks a dummy entry as it
 * shrinks a real one, so every answer compresses to about one size, and a verifier regenerates the
 * padding, so nothing can be hidden in it. Integers big-endian. Nothing here imports `node:`: the
 * build writes answers with the code a verifier checks them with.
 */
import { InvalidArgumentError } from './errors.ts';
import type { Sha256 } from './tlog/merkle.ts';

/** The first bytes of every compact answer. */
export const COMPACT_MAGIC = 'mvl1';
/** Bytes before the entry slots. */
export const COMPACT_HEADER_SIZE = 48;
/** Bytes of a map entry (a v2 leaf) and of a hash. */
const ENTRY = 82;
const HASH = 32;
/** Bits of the bucket are chosen so a bucket holds at most this many audited domains on average (at least half of it). */
export const AUDITED_PER_BUCKET = 256;
/** Every answer fits in this many bytes when hashes are random (a bucket's largest is about mean + 5 sigma). */
export const COMPACT_ANSWER_LIMIT = 32 * 1024;

/** What a build statement says about its compact answers, beside `prefix_length` and `answer_bytes` of the JSON ones. */
export interface CompactLookupHead {
  /** Bits of every bucket asked of this build ({@link bucketBitsFor} of its size). */
  bits: number;
  /** Bytes of every compact answer of this build. */
  bucket_bytes: number;
}

/**
 * The bits of a build of `size` audited domains: the fewest for which buckets hold at most
 * {@link AUDITED_PER_BUCKET} on average, and at least 1. Buckets then hold 128 to 256 on average
 * at any size from 512 up; a verifier refuses any longer bucket, so a gateway cannot narrow one down.
 */
export function bucketBitsFor(size: number): number {
  let bits = 1;
  while (size / 2 ** bits > AUDITED_PER_BUCKET) bits++;
  return bits;
}

/** The bucket of a hash: its first `bits` bits, as an unsigned integer. */
export function bucketOf(hash: Uint8Array, bits: number): number {
  const top = ((hash[0]! << 24) | (hash[1]! << 16) | (hash[2]! << 8) | hash[3]!) >>> 0;
  return bits === 0 ? 0 : Math.floor(top / 2 ** (32 - bits));
}

/** A bucket in a URL: the hex digits that hold its bits, the bits past them zero (13 bits: 4 digits). */
export function bucketHex(bucket: number, bits: number): string {
  const digits = Math.ceil(bits / 4);
  return (bucket * 2 ** (digits * 4 - bits)).toString(16).padStart(digits, '0');
}

/** The bucket a URL's hex digits name for `bits`; null when they are not exactly that many lowercase digits with the bits past them zero. */
export function bucketOfHex(hex: string, bits: number): number | null {
  const digits = Math.ceil(bits / 4);
  if (hex.length !== digits || !/^[0-9a-f]+$/.test(hex)) return null;
  const value = Number.parseInt(hex, 16);
  const spare = 2 ** (digits * 4 - bits);
  return value % spare === 0 ? value / spare : null;
}

/** The most hashes a range proof in a tree of `size` leaves holds: two a level. */
export function maxProofHashes(size: number): number {
  return size <= 1 ? 0 : 2 * Math.ceil(Math.log2(size));
}

/** Bytes of every answer of a build whose largest bucket holds `largest` entries: room for it, both neighbours and the longest proof. */
export function compactAnswerBytes(size: number, largest: number): number {
  return COMPACT_HEADER_SIZE + (largest + 2) * ENTRY + maxProofHashes(size) * HASH;
}

/** The entry slots of an answer of `bytes` in a map of `size`; null when no whole number fits. */
export function entrySlots(size: number, bytes: number): number | null {
  const room = bytes - COMPACT_HEADER_SIZE - maxProofHashes(size) * HASH;
  return room >= 0 && room % ENTRY === 0 ? room / ENTRY : null;
}

/** A compact answer's members. */
export interface CompactAnswer {
  bits: number;
  bucket: number;
  /** Map index of the first of `entries`. */
  first: number;
  /** The run's entries with their neighbours, in map order. */
  entries: Uint8Array[];
  proof: Uint8Array[];
  root: Uint8Array;
}

/**
 * A compact answer's bytes, padded to `bytes` (the statement's `bucket_bytes`). Throws
 * INVALID_ARGUMENT (misuse, never a verdict) when the run does not fit, which the build's own
 * count rules out.
 */
export function encodeCompactAnswer(sha256: Sha256, a: CompactAnswer, size: number, bytes: number): Uint8Array {
  const slots = entrySlots(size, bytes);
  if (slots === null || a.entries.length > slots || a.proof.length > maxProofHashes(size) || a.entries.length > 0xffff)
    throw new InvalidArgumentError('answer', `bucket ${a.bucket} (${a.entries.length} entries) does not fit an answer of ${bytes} bytes`);
  const out = new Uint8Array(bytes);
  out.set(new TextEncoder().encode(COMPACT_MAGIC), 0);
  const view = new DataView(out.buffer);
  out[4] = a.bits;
  view.setUint32(5, a.bucket);
  view.setUint32(9, a.first);
  view.setUint16(13, a.entries.length);
  out[15] = a.proof.length;
  out.set(a.root, 16);
  for (const [i, e] of a.entries.entries()) out.set(e, COMPACT_HEADER_SIZE + i * ENTRY);
  const proofAt = COMPACT_HEADER_SIZE + slots * ENTRY;
  for (const [i, p] of a.proof.entries()) out.set(p, proofAt + i * HASH);
  writePadding(sha256, out, a.entries, a.proof.length, a.root, a.bits, a.bucket, slots);
  return out;
}

/**
 * Fills the slots past the run and past the proof: dummy entries (two stream hashes, and status and
 * tier, score and next audit each taken from a different entry of the run) and dummy hashes, all from SHA-256 of the root, the bucket
 * and a counter. A verifier writes the same bytes and compares.
 */
function writePadding(
  sha256: Sha256,
  out: Uint8Array,
  entries: Uint8Array[],
  proofCount: number,
  root: Uint8Array,
  bits: number,
  bucket: number,
  slots: number,
): void {
  const seed = new Uint8Array(4 + 32 + 1 + 4 + 4);
  seed.set(new TextEncoder().encode(COMPACT_MAGIC), 0);
  seed.set(root, 4);
  const view = new DataView(seed.buffer);
  seed[36] = bits;
  view.setUint32(37, bucket);
  const block = (n: number): Uint8Array => {
    view.setUint32(41, n);
    return sha256(seed);
  };
  for (let i = entries.length; i < slots; i++) {
    const at = COMPACT_HEADER_SIZE + i * ENTRY;
    out.set(block(2 * i), at);
    out.set(block(2 * i + 1), at + HASH);
    // Each verdict member from a different real entry: new combinations of the values the bucket holds, as real entries are.
    const n = entries.length;
    const from = (k: number, start: number, end: number) =>
      n > 0 ? entries[k % n]!.subarray(start, end) : block(2 * i).subarray(0, end - start);
    out.set(from(i, 64, 66), at + 64);
    out.set(from(i * 7 + 1, 66, 74), at + 66);
    out.set(from(i * 13 + 2, 74, 82), at + 74);
  }
  const proofAt = COMPACT_HEADER_SIZE + slots * ENTRY;
  const proofSlots = (out.length - proofAt) / HASH;
  for (let i = proofCount; i < proofSlots; i++) out.set(block(2 * slots + i), proofAt + i * HASH);
}

/**
 * An answer's members from its bytes, with its size and the statement's map: a string saying what
 * is wrong when it is not one (its padding is checked by {@link paddingMismatch}).
 */
export function decodeCompactAnswer(bytes: Uint8Array, size: number): (CompactAnswer & { slots: number }) | string {
  const slots = entrySlots(size, bytes.length);
  if (slots === null || bytes.length < COMPACT_HEADER_SIZE) return `${bytes.length} bytes is no compact answer's size for a map of ${size}`;
  if (new TextDecoder().decode(bytes.subarray(0, 4)) !== COMPACT_MAGIC) return `it does not begin with ${COMPACT_MAGIC}`;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint16(13);
  const proofCount = bytes[15]!;
  if (count > slots) return `it says ${count} entries, but has room for ${slots}`;
  if (proofCount > maxProofHashes(size))
    return `it says ${proofCount} proof hashes, but a map of ${size} needs at most ${maxProofHashes(size)}`;
  const proofAt = COMPACT_HEADER_SIZE + slots * ENTRY;
  return {
    bits: bytes[4]!,
    bucket: view.getUint32(5),
    first: view.getUint32(9),
    entries: Array.from({ length: count }, (_, i) => bytes.slice(COMPACT_HEADER_SIZE + i * ENTRY, COMPACT_HEADER_SIZE + (i + 1) * ENTRY)),
    proof: Array.from({ length: proofCount }, (_, i) => bytes.slice(proofAt + i * HASH, proofAt + (i + 1) * HASH)),
    root: bytes.slice(16, 48),
    slots,
  };
}

/** Whether an answer's padding is the one its root and bucket give: the first byte that differs, or null. */
export function paddingMismatch(sha256: Sha256, bytes: Uint8Array, a: CompactAnswer & { slots: number }): number | null {
  const expected = bytes.slice();
  writePadding(sha256, expected, a.entries, a.proof.length, a.root, a.bits, a.bucket, a.slots);
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== expected[i]) return i;
  return null;
}

/** The lowest 32-byte hash of a bucket, and the lowest above it (null past the last bucket). */
export function bucketBounds(bucket: number, bits: number): { low: Uint8Array; high: Uint8Array | null } {
  const at = (n: number): Uint8Array => {
    const out = new Uint8Array(HASH);
    const top = n * 2 ** (32 - bits);
    new DataView(out.buffer).setUint32(0, top);
    return out;
  };
  return { low: at(bucket), high: bucket + 1 >= 2 ** bits ? null : at(bucket + 1) };
}
