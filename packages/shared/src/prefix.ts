/**
 * What private lookups share: a proof that a run of the map's leaves is complete is the run,
 * widened by one leaf on each side (the neighbours just outside it, as an absence proof gives
 * them), and the hashes of the subtrees outside the run: the verifier hashes the run itself and
 * must arrive at the signed root, so no leaf of the run can be dropped, added or moved (a compact
 * answer's bucket is such a run). The hex prefix length and padded size a build statement still
 * signs (`prefix_length`, `answer_bytes`) are those of the JSON prefix answers the route served
 * before compact answers replaced it. Nothing here imports `node:`: the build writes answers with
 * the code a verifier checks them with.
 */
import { splitPoint, type TreeHasher } from './tlog/merkle.ts';

/** Bytes of a hash: a prefix bound, a v1 leaf, a node of a range proof. */
const LEAF_SIZE = 32;

/** The fewest hex digits a prefix has, whatever the build's size. */
export const MIN_PREFIX_LENGTH = 1;

/** A prefix length is chosen so that every prefix covers at least this many audited domains on average. */
export const AUDITED_PER_PREFIX = 256;

/** What a build statement says about its prefix lookups (`lookup`), signed with the rest. */
export interface LookupHead {
  /** Hex digits of every prefix asked of this build. */
  prefix_length: number;
  /** The UTF-8 length of every JSON prefix answer's padded part: one size for every prefix. */
  answer_bytes: number;
  /** Bits of every bucket of the build's compact answers (`GET /v1/lookup/{bits}/{hex}`); absent from builds made before them. */
  bits?: number;
  /** Bytes of every compact answer of the build. */
  bucket_bytes?: number;
}

/**
 * The prefix length of a build of `size` domains: the longest whose prefixes cover at least
 * {@link AUDITED_PER_PREFIX} domains on average, and never shorter than {@link MIN_PREFIX_LENGTH}
 * (a build under 4,096 domains then has fewer per prefix: it is small enough to copy whole).
 */
export function prefixLengthFor(size: number): number {
  let length = MIN_PREFIX_LENGTH;
  while (size / 16 ** (length + 1) >= AUDITED_PER_PREFIX) length++;
  return length;
}

/** The first `length` lowercase hex digits of a hash. */
export function hexPrefix(hash: Uint8Array, length: number): string {
  let hex = '';
  for (let i = 0; hex.length < length; i++) hex += hash[i]!.toString(16).padStart(2, '0');
  return hex.slice(0, length);
}

/** The most subtree hashes a range proof in a tree of `size` leaves can hold: two a level. */
export function maxRangeProof(size: number): number {
  return size <= 1 ? 0 : 2 * Math.ceil(Math.log2(size));
}

/**
 * The size every JSON prefix answer of a build was padded to (its padded part's JSON text: the
 * prefix, first, leaves, records, proof and padding): an upper bound over every prefix, from the most records a prefix holds and the most bytes of records a prefix holds (the
 * build counts both as it writes its records), with room for both neighbours and the longest
 * range proof. A base64 hash is 44 characters, 46 quoted, 47 with its comma; a leaf of `leafSize`
 * bytes (82, a v2 entry: 115; 32, a v1 hash, the default: 47) likewise.
 */
export function lookupAnswerBytes(o: {
  prefixLength: number;
  size: number;
  maxRecords: number;
  maxRecordBytes: number;
  leafSize?: number;
}): number {
  const members = '{"prefix":"","first":,"leaves":[],"records":[],"proof":[],"padding":""}'.length;
  const leafChars = 4 * Math.ceil((o.leafSize ?? LEAF_SIZE) / 3) + 3;
  return (
    members +
    o.prefixLength +
    String(Math.max(o.size, 1)).length +
    leafChars * (o.maxRecords + 2) +
    o.maxRecordBytes +
    o.maxRecords +
    47 * maxRangeProof(o.size)
  );
}

/**
 * A run of a map's leaves checked against the map's root: the tree's nodes over the run are
 * hashed from its leaves, those outside it taken from the proof, in the order {@link rangeProofOrder}
 * walks them. `path` then gives the inclusion path of any leaf of the run, as an absence proof carries it.
 */
export class ProvenRange {
  private constructor(
    readonly root: Uint8Array,
    private readonly nodes: Map<string, Uint8Array>,
    private readonly size: number,
  ) {}

  /** The run `leaves` from index `first` of a tree of `size` leaves, with `proof`; null when the proof has too few or too many hashes. */
  static of(h: TreeHasher, size: number, first: number, leaves: Uint8Array[], proof: Uint8Array[]): ProvenRange | null {
    const end = first + leaves.length;
    if (size === 0) return leaves.length === 0 && proof.length === 0 ? new ProvenRange(h.empty(), new Map(), 0) : null;
    if (leaves.length === 0 || first < 0 || end > size) return null;
    const nodes = new Map<string, Uint8Array>();
    let next = 0;
    let short = false;
    const walk = (s: number, e: number): Uint8Array => {
      let v: Uint8Array;
      if (e <= first || s >= end) {
        v = proof[next++] ?? new Uint8Array(LEAF_SIZE);
        short ||= next > proof.length;
      } else if (e - s === 1) v = h.leaf(leaves[s - first]!);
      else {
        const k = splitPoint(e - s);
        v = h.node(walk(s, s + k), walk(s + k, e));
      }
      nodes.set(`${s}:${e}`, v);
      return v;
    };
    const root = walk(0, size);
    return short || next !== proof.length ? null : new ProvenRange(root, nodes, size);
  }

  /** RFC 9162 inclusion path of leaf `index` of the run, from the leaf up. */
  path(index: number): Uint8Array[] {
    const up = (m: number, s: number, e: number): Uint8Array[] => {
      if (e - s === 1) return [];
      const k = splitPoint(e - s);
      return m < s + k ? [...up(m, s, s + k), this.nodes.get(`${s + k}:${e}`)!] : [...up(m, s + k, e), this.nodes.get(`${s}:${s + k}`)!];
    };
    return up(index, 0, this.size);
  }
}

/**
 * The order a range proof lists the hashes outside leaves `[start, end)` of a tree of `size`:
 * depth first, left before right, each maximal subtree that holds none of them once. `hashOf`
 * gives a subtree's hash (the map keeps them).
 */
export function rangeProofOrder(size: number, start: number, end: number, hashOf: (s: number, e: number) => Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const walk = (s: number, e: number): void => {
    if (e <= start || s >= end) out.push(hashOf(s, e));
    else if (e - s > 1) {
      const k = splitPoint(e - s);
      walk(s, s + k);
      walk(s + k, e);
    }
  };
  if (size > 0 && end > start) walk(0, size);
  return out;
}
