/**
 * The domain map of a build: which domains have a record in it, as an RFC 6962 Merkle tree, so
 * that "never audited" is decided by the build and can be proven to anyone.
 *
 * A leaf begins with `SHA-256(UTF-8 of the normalized domain)` of a domain with a record: in a v1
 * map it is that hash alone (32 bytes), in a v2 map the domain's entry (82 bytes, see
 * `map-entry.ts`). Leaves are sorted ascending bytewise by that domain hash, without duplicates;
 * leaf and node hashes as RFC 6962. A domain whose hash
 * falls strictly between two adjacent leaves (or before the first, or after the last) has no
 * record in the build, and the two neighbours with their inclusion paths prove it (DNSSEC's
 * NSEC3 does the same for a signed zone). Nothing here imports `node:`: the portable verifier
 * checks proofs with the same code the gateway builds them with.
 */
import { bucketBounds } from './compact.ts';
import { InvalidArgumentError } from './errors.ts';
import { ENTRY_SIZE, entryMismatch, HASH_LEAF_SIZE } from './map-entry.ts';
import { rangeProofOrder } from './prefix.ts';
import { decodeBase64, encodeBase64 } from './tlog/base64.ts';
import { foldPerfect, isPowerOfTwo, type Sha256, splitPoint, type TreeHasher } from './tlog/merkle.ts';

/** Bytes of a leaf: a v1 map's (the domain hash) or a v2 map's (the domain's entry). */
export type LeafSize = typeof HASH_LEAF_SIZE | typeof ENTRY_SIZE;

/** One neighbour of an absent domain: the leaf at `index` and its RFC 9162 inclusion path, from the leaf up. */
export interface MapNeighbour {
  index: number;
  leaf: string;
  path: string[];
}

/** The domain map's part of a build statement: its size and root (base64). */
export interface DomainMapHead {
  size: number;
  root: string;
}

/** Leaves at and below this many are hashed on demand; the hashes of aligned runs of this size are kept. */
const RUN = 64;

/** Compares two hashes, or two leaves by their domain hash, on their first 32 bytes: negative, zero or positive. */
export function compareHashes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < HASH_LEAF_SIZE; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** The leaf of a normalized domain: SHA-256 of its UTF-8 bytes. */
export function domainHash(sha256: Sha256, domain: string): Uint8Array {
  return sha256(new TextEncoder().encode(domain));
}

/**
 * Why a map leaf is not the given record's, or null when it is: the one comparison every path that
 * holds a record and its place in a build's map makes (a bundle). A v1 leaf (32 bytes) is SHA-256 of
 * the record's domain, so it says which domain has a record, not which record; a v2 leaf is the
 * record's entry, which commits to its bytes and what it says ({@link entryMismatch}).
 */
export function leafMismatch(sha256: Sha256, leaf: Uint8Array, record: unknown): string | null {
  if (leaf.length === ENTRY_SIZE) return entryMismatch(sha256, leaf, record);
  const domain = (record as { domain?: unknown } | null)?.domain;
  if (typeof domain !== 'string') return 'the record has no domain';
  return leaf.length === HASH_LEAF_SIZE && compareHashes(leaf, domainHash(sha256, domain)) === 0 ? null : `the leaf is not ${domain}'s`;
}

/**
 * A build's domain map in memory: the sorted leaves in one buffer (32 or 82 bytes each) and the hashes
 * of every aligned, perfect subtree of {@link RUN} leaves or more (`levels[k][j]` covers leaves
 * `[j·RUN·2^k, (j+1)·RUN·2^k)`), so that a proof hashes at most two runs of leaves rather than the
 * whole tree. At a million domains that is 82 MB of v2 leaves and 1 MB of subtree hashes.
 */
export class DomainMap {
  readonly size: number;
  readonly root: Uint8Array;

  private constructor(
    private readonly h: TreeHasher,
    private readonly leaves: Uint8Array,
    private readonly levels: Uint8Array[][],
    readonly leafSize: LeafSize,
  ) {
    this.size = leaves.length / leafSize;
    this.root = this.size === 0 ? h.empty() : this.rangeHash(0, this.size);
  }

  /**
   * Reads a map from its leaves (n × `leafSize` bytes, as the build writes them; its statement's
   * schema says which size), checking that they are sorted by domain hash without duplicates, and
   * computes its root. `pause` is awaited now and then, so a server loading a large map keeps
   * answering meanwhile.
   */
  static async fromLeaves(
    h: TreeHasher,
    leaves: Uint8Array,
    { leafSize = HASH_LEAF_SIZE, pause = async () => undefined }: { leafSize?: LeafSize; pause?: () => Promise<void> } = {},
  ): Promise<DomainMap> {
    if (leaves.length % leafSize !== 0)
      throw new InvalidArgumentError(
        'leaves',
        `a domain map is a whole number of ${leafSize}-byte leaves; this one has ${leaves.length} bytes`,
      );
    const size = leaves.length / leafSize;
    const runs: Uint8Array[] = [];
    for (let start = 0; start < size; start += RUN) {
      const end = Math.min(start + RUN, size);
      for (let i = Math.max(start, 1); i < end; i++) {
        if (compareHashes(leaves.subarray((i - 1) * leafSize, i * leafSize), leaves.subarray(i * leafSize, (i + 1) * leafSize)) >= 0) {
          throw new InvalidArgumentError('leaves', `the domain map's leaves are not in strictly ascending order at leaf ${i}`);
        }
      }
      if (end - start === RUN) runs.push(hashLeaves(h, leaves, leafSize, start, end));
      if (runs.length % 256 === 0) await pause();
    }
    const levels = [runs];
    for (let level = runs; level.length > 1; ) {
      const up: Uint8Array[] = [];
      for (let j = 0; j + 1 < level.length; j += 2) up.push(h.node(level[j]!, level[j + 1]!));
      levels.push(up);
      level = up;
    }
    return new DomainMap(h, leaves, levels, leafSize);
  }

  /** The map's head as a build statement carries it. */
  head(): DomainMapHead {
    return { size: this.size, root: encodeBase64(this.root) };
  }

  /** The leaf at `index`. */
  leaf(index: number): Uint8Array {
    return this.leaves.subarray(index * this.leafSize, (index + 1) * this.leafSize);
  }

  /** Where a domain `hash` is (leaves compared by their first 32 bytes): `found` when it is a leaf, and its index, or the index it would be inserted at. A binary search. */
  search(hash: Uint8Array): { found: boolean; index: number } {
    let lo = 0,
      hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareHashes(this.leaf(mid), hash);
      if (c === 0) return { found: true, index: mid };
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return { found: false, index: lo };
  }

  /** Whether the domain with this leaf has a record in the build. */
  has(hash: Uint8Array): boolean {
    return this.search(hash).found;
  }

  /** The neighbours proving `hash` absent (null on a side with none); throws when it is a leaf. */
  neighbours(hash: Uint8Array): { left: MapNeighbour | null; right: MapNeighbour | null } {
    const { found, index } = this.search(hash);
    if (found) throw new InvalidArgumentError('hash', 'the domain is in the map: there is no absence to prove');
    return {
      left: index > 0 ? this.neighbour(index - 1) : null,
      right: index < this.size ? this.neighbour(index) : null,
    };
  }

  private neighbour(index: number): MapNeighbour {
    return { index, leaf: encodeBase64(this.leaf(index)), path: this.inclusionPath(index).map(encodeBase64) };
  }

  /**
   * The run of leaves of a bucket (the hashes whose first `bits` bits are `bucket`), widened by the
   * neighbour just outside it on each side, with its range proof: a compact answer's members.
   */
  bucketRun(bits: number, bucket: number): { first: number; entries: Uint8Array[]; proof: Uint8Array[] } {
    if (this.size === 0) return { first: 0, entries: [], proof: [] };
    const { low, high } = bucketBounds(bucket, bits);
    const start = Math.max(this.search(low).index - 1, 0);
    const end = Math.min((high ? this.search(high).index : this.size) + 1, this.size);
    const entries: Uint8Array[] = [];
    for (let i = start; i < end; i++) entries.push(this.leaf(i));
    return { first: start, entries, proof: rangeProofOrder(this.size, start, end, (s, e) => this.rangeHash(s, e)) };
  }

  /** RFC 6962 PATH(index, D[0:size]), the leaf's sibling first. */
  inclusionPath(index: number): Uint8Array[] {
    const path = (m: number, start: number, end: number): Uint8Array[] => {
      if (end - start === 1) return [];
      const k = splitPoint(end - start);
      return m < k
        ? [...path(m, start, start + k), this.rangeHash(start + k, end)]
        : [...path(m - k, start + k, end), this.rangeHash(start, start + k)];
    };
    return path(index, 0, this.size);
  }

  /** The Merkle Tree Hash of leaves `[start, end)`, from the run hashes where a run is whole. */
  private rangeHash(start: number, end: number): Uint8Array {
    const n = end - start;
    if (n === 1) return this.h.leaf(this.leaf(start));
    if (n >= RUN && isPowerOfTwo(n) && start % n === 0) return this.levels[Math.log2(n / RUN)]![start / n]!;
    const k = splitPoint(n);
    return this.h.node(this.rangeHash(start, start + k), this.rangeHash(start + k, end));
  }
}

function hashLeaves(h: TreeHasher, leaves: Uint8Array, leafSize: number, start: number, end: number): Uint8Array {
  const hashes: Uint8Array[] = [];
  for (let i = start; i < end; i++) hashes.push(h.leaf(leaves.subarray(i * leafSize, (i + 1) * leafSize)));
  return foldPerfect(h, hashes);
}

/** Decodes a 32-byte hash in base64; null when it is anything else. */
export function decodeHash(text: unknown): Uint8Array | null {
  return decodeLeaf(text, HASH_LEAF_SIZE);
}

/** Decodes a leaf in base64 of the map's leaf size (a v1 hash, a v2 entry); null when it is anything else. */
export function decodeLeaf(text: unknown, leafSize: LeafSize): Uint8Array | null {
  if (typeof text !== 'string') return null;
  const bytes = decodeBase64(text);
  return bytes && bytes.length === leafSize ? bytes : null;
}
