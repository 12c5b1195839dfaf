/**
 * The domain map of a build: which domains have a record in it, as an RFC 6962 Merkle tree, so
 * that "never audited" is decided by the build and can be proven to anyone.
 *
 * Leaves are `SHA-256(UTF-8 of the normalized domain)` of every domain with a record, sorted
 * ascending bytewise, without duplicates; leaf and node hashes as RFC 6962. A domain whose hash
 * falls strictly between two adjacent leaves (or before the first, or after the last) has no
 * record in the build, and the two neighbours with their inclusion paths prove it (DNSSEC's
 * NSEC3 does the same for a signed zone). Nothing here imports `node:`: the portable verifier
 * checks proofs with the same code the gateway builds them with.
 */
import { InvalidArgumentError } from './errors.ts';
import { prefixBounds, rangeProofOrder } from './prefix.ts';
import { decodeBase64, encodeBase64 } from './tlog/base64.ts';
import { foldPerfect, isPowerOfTwo, type Sha256, splitPoint, type TreeHasher } from './tlog/merkle.ts';

/** Bytes of one leaf (a SHA-256). */
export const LEAF_SIZE = 32;

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

/** Compares two 32-byte hashes bytewise: negative, zero or positive. */
export function compareHashes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < LEAF_SIZE; i++) {
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
 * Whether a map leaf is the given record's: the one comparison every path that holds a record and
 * its place in a build's map makes (a bundle). Today a leaf is SHA-256 of the record's domain, so a
 * leaf says which domain has a record, not which record; a leaf that also commits to the record's
 * bytes changes this function alone.
 */
export function leafMatchesRecord(sha256: Sha256, leaf: Uint8Array, record: unknown): boolean {
  const domain = (record as { domain?: unknown } | null)?.domain;
  return typeof domain === 'string' && leaf.length === LEAF_SIZE && compareHashes(leaf, domainHash(sha256, domain)) === 0;
}

/**
 * A build's domain map in memory: the sorted leaves in one buffer (32 bytes each) and the hashes
 * of every aligned, perfect subtree of {@link RUN} leaves or more (`levels[k][j]` covers leaves
 * `[j·RUN·2^k, (j+1)·RUN·2^k)`), so that a proof hashes at most two runs of leaves rather than the
 * whole tree. At a million domains that is 32 MB of leaves and 1 MB of subtree hashes.
 */
export class DomainMap {
  readonly size: number;
  readonly root: Uint8Array;

  private constructor(
    private readonly h: TreeHasher,
    private readonly leaves: Uint8Array,
    private readonly levels: Uint8Array[][],
  ) {
    this.size = leaves.length / LEAF_SIZE;
    this.root = this.size === 0 ? h.empty() : this.rangeHash(0, this.size);
  }

  /**
   * Reads a map from its leaves (n × 32 bytes, as the build writes them), checking that they
   * are sorted without duplicates, and computes its root. `pause` is awaited now and then, so a
   * server loading a large map keeps answering meanwhile.
   */
  static async fromLeaves(h: TreeHasher, leaves: Uint8Array, pause: () => Promise<void> = async () => undefined): Promise<DomainMap> {
    if (leaves.length % LEAF_SIZE !== 0)
      throw new InvalidArgumentError(
        'leaves',
        `a domain map is a whole number of ${LEAF_SIZE}-byte leaves; this one has ${leaves.length} bytes`,
      );
    const size = leaves.length / LEAF_SIZE;
    const runs: Uint8Array[] = [];
    for (let start = 0; start < size; start += RUN) {
      const end = Math.min(start + RUN, size);
      for (let i = Math.max(start, 1); i < end; i++) {
        if (compareHashes(leaves.subarray((i - 1) * LEAF_SIZE, i * LEAF_SIZE), leaves.subarray(i * LEAF_SIZE, (i + 1) * LEAF_SIZE)) >= 0) {
          throw new InvalidArgumentError('leaves', `the domain map's leaves are not in strictly ascending order at leaf ${i}`);
        }
      }
      if (end - start === RUN) runs.push(hashLeaves(h, leaves, start, end));
      if (runs.length % 256 === 0) await pause();
    }
    const levels = [runs];
    for (let level = runs; level.length > 1; ) {
      const up: Uint8Array[] = [];
      for (let j = 0; j + 1 < level.length; j += 2) up.push(h.node(level[j]!, level[j + 1]!));
      levels.push(up);
      level = up;
    }
    return new DomainMap(h, leaves, levels);
  }

  /** The map's head as a build statement carries it. */
  head(): DomainMapHead {
    return { size: this.size, root: encodeBase64(this.root) };
  }

  /** The leaf at `index`. */
  leaf(index: number): Uint8Array {
    return this.leaves.subarray(index * LEAF_SIZE, (index + 1) * LEAF_SIZE);
  }

  /** Where `hash` is: `found` when it is a leaf, and its index, or the index it would be inserted at. A binary search. */
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
   * The run of leaves with a hex `prefix`, widened by the neighbour just outside it on each side
   * (where there is one): its first index, its leaves (base64) and its range proof (base64).
   */
  prefixRun(prefix: string): { first: number; leaves: string[]; proof: string[] } {
    if (this.size === 0) return { first: 0, leaves: [], proof: [] };
    const { low, high } = prefixBounds(prefix);
    const start = Math.max(this.search(low).index - 1, 0);
    const end = Math.min((high ? this.search(high).index : this.size) + 1, this.size);
    const leaves: string[] = [];
    for (let i = start; i < end; i++) leaves.push(encodeBase64(this.leaf(i)));
    const proof = rangeProofOrder(this.size, start, end, (s, e) => this.rangeHash(s, e));
    return { first: start, leaves, proof: proof.map(encodeBase64) };
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

function hashLeaves(h: TreeHasher, leaves: Uint8Array, start: number, end: number): Uint8Array {
  const hashes: Uint8Array[] = [];
  for (let i = start; i < end; i++) hashes.push(h.leaf(leaves.subarray(i * LEAF_SIZE, (i + 1) * LEAF_SIZE)));
  return foldPerfect(h, hashes);
}

/** Decodes a 32-byte hash in base64; null when it is anything else. */
export function decodeHash(text: unknown): Uint8Array | null {
  if (typeof text !== 'string') return null;
  const bytes = decodeBase64(text);
  return bytes && bytes.length === LEAF_SIZE ? bytes : null;
}
