/**
 * RFC 6962 Merkle tree hashing (SHA-256) and the proof algorithms of RFC 9162, section 2.1: the
 * rules of the transparency log, written once. The SHA-256 primitive is passed in, as the
 * Ed25519 one is for records: node:crypto on the server, @noble/hashes in the portable verifier.
 * Nothing here imports `node:`.
 */
import { InvalidArgumentError } from '../errors.ts';

export type Sha256 = (data: Uint8Array) => Uint8Array;

/** A SHA-256 hash of the tree: a leaf's, a node's, a root's (32 bytes). Go's x/mod tlog.Hash. */
export type Hash = Uint8Array;

/** The hashes that prove one record (a leaf) is in a tree, the leaf's sibling first (RFC 6962 PATH). Go's tlog.RecordProof. */
export type RecordProof = Hash[];

/** The hashes that prove a tree extends an older one (RFC 6962 PROOF). Go's tlog.TreeProof. */
export type TreeProof = Hash[];

/** A tree by its size and its root: a checkpoint is one. */
export interface TreeHead {
  readonly size: number;
  readonly root: Hash;
}

/** A leaf by its place and its hash (`TreeHasher.leaf` of its entry). */
export interface Leaf {
  readonly index: number;
  readonly hash: Hash;
}

/** Leaf and node hashes: `SHA-256(0x00 || entry)` and `SHA-256(0x01 || left || right)`. */
export interface TreeHasher {
  leaf(entry: Uint8Array): Uint8Array;
  node(left: Uint8Array, right: Uint8Array): Uint8Array;
  /** The root of the empty tree, `SHA-256("")`. */
  empty(): Uint8Array;
}

export function treeHasher(sha256: Sha256): TreeHasher {
  return {
    leaf(entry) {
      const data = new Uint8Array(1 + entry.length);
      data.set(entry, 1);
      return sha256(data);
    },
    node(left, right) {
      const data = new Uint8Array(1 + left.length + right.length);
      data[0] = 1;
      data.set(left, 1);
      data.set(right, 1 + left.length);
      return sha256(data);
    },
    empty: () => sha256(new Uint8Array(0)),
  };
}

/** The hash of a perfect run of hashes (a power of two of them), folded pairwise. */
export function foldPerfect(h: TreeHasher, hashes: Uint8Array[]): Uint8Array {
  let level = hashes;
  while (level.length > 1) {
    const up: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) up.push(h.node(level[i]!, level[i + 1]!));
    level = up;
  }
  return level[0]!;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** The largest power of two smaller than n (n > 1). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * Whether `proof` proves that `leaf` (its hash at its index) is in the tree `tree` (RFC 9162,
 * 2.1.3.2). Named, not positional: a leaf and a root cannot trade places. Sizes and indexes are
 * safe integers.
 */
export function verifyInclusion(h: TreeHasher, tree: TreeHead, leaf: Leaf, proof: RecordProof): boolean {
  const { index, hash: leafHash } = leaf;
  const { size, root } = tree;
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  if (leafHash.length !== 32 || root.length !== 32 || proof.some((p) => p.length !== 32)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = h.node(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = h.node(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(r, root);
}

/**
 * Whether `proof` proves that the tree `newer` extends the tree `older`: the same first
 * `older.size` entries, unchanged (RFC 9162, 2.1.4.2).
 */
export function verifyConsistency(h: TreeHasher, older: TreeHead, newer: TreeHead, proof: TreeProof): boolean {
  const { size: size1, root: root1 } = older;
  const { size: size2, root: root2 } = newer;
  if (!Number.isSafeInteger(size1) || !Number.isSafeInteger(size2) || size1 < 0 || size2 < size1) return false;
  // An empty older tree proves nothing (every tree extends it): refused, as the reference
  // implementation does; callers that start from an empty log know it without a proof.
  if (size1 === 0) return false;
  // Equal sizes need no proof, only equal roots.
  if (size1 === size2) return proof.length === 0 && equalBytes(root1, root2);
  if (proof.length === 0 || root1.length !== 32 || root2.length !== 32 || proof.some((p) => p.length !== 32)) return false;
  // A size1 that is a power of two is its own first node: the proof starts from root1.
  const path = isPowerOfTwo(size1) ? [root1, ...proof] : proof;
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = h.node(c, fr);
      sr = h.node(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = h.node(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(fr, root1) && equalBytes(sr, root2);
}

/** Exact for every safe integer (bitwise operators stop at 32 bits). */
export function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

/** The Merkle Tree Hash of the entries `[start, end)`, from wherever the hashes are kept. */
export type RangeHash = (start: number, end: number) => Promise<Uint8Array>;

/**
 * The Merkle Tree Hash of `[start, end)` when the hashes at hand are those of perfect, aligned
 * subtrees (`perfect`): split at the largest power of two, as RFC 6962 defines MTH.
 */
export function rangeHash(h: TreeHasher, perfect: RangeHash): RangeHash {
  const mth: RangeHash = async (start, end) => {
    const n = end - start;
    if (isPowerOfTwo(n) && start % n === 0) return perfect(start, end);
    const k = splitPoint(n);
    return h.node(await mth(start, start + k), await mth(start + k, end));
  };
  return mth;
}

/** RFC 6962 PATH(index, D[0:size]): the inclusion proof of one entry, leaf's sibling first. */
export async function inclusionProof(mth: RangeHash, index: number, size: number): Promise<RecordProof> {
  if (!Number.isSafeInteger(index) || index < 0 || index >= size)
    throw new InvalidArgumentError('index', `entry ${index} is not in a tree of ${size}`);
  const path = async (m: number, start: number, end: number): Promise<Uint8Array[]> => {
    const n = end - start;
    if (n === 1) return [];
    const k = splitPoint(n);
    return m < k
      ? [...(await path(m, start, start + k)), await mth(start + k, end)]
      : [...(await path(m - k, start + k, end)), await mth(start, start + k)];
  };
  return path(index, 0, size);
}

/** RFC 6962 PROOF(size1, D[0:size2]): the consistency proof between two sizes of one tree. */
export async function consistencyProof(mth: RangeHash, size1: number, size2: number): Promise<TreeProof> {
  if (!Number.isSafeInteger(size1) || size1 < 0 || size2 < size1)
    throw new InvalidArgumentError('size1', `no consistency proof from ${size1} to ${size2}`);
  if (size1 === 0 || size1 === size2) return [];
  const sub = async (m: number, start: number, end: number, complete: boolean): Promise<Uint8Array[]> => {
    const n = end - start;
    if (m === n) return complete ? [] : [await mth(start, end)];
    const k = splitPoint(n);
    return m <= k
      ? [...(await sub(m, start, start + k, complete)), await mth(start + k, end)]
      : [...(await sub(m - k, start + k, end, false)), await mth(start, start + k)];
  };
  return sub(size1, 0, size2, true);
}
