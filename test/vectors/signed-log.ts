/**
 * A small signed log for the vector generators: a log key made from a fixed seed, its note verifier
 * key, and C2SP tlog-proofs of an entry in a tree of given leaves, against a checkpoint the log key
 * signs (of that tree, or of another one, for forgeries). RFC 6962 hashing by the package's own code.
 */
import { createHash, sign } from 'node:crypto';
import {
  foldPerfect,
  formatCheckpoint,
  formatTlogProof,
  formatVerifierKey,
  inclusionProof,
  noteKeyId,
  rangeHash,
  signatureLine,
  treeHasher,
} from '#shared';
import { publicOf, seededKey } from './seeded-keys.ts';

const sha = (d: Uint8Array | string) => new Uint8Array(createHash('sha256').update(d).digest());
const h = treeHasher(sha);

/** The log of `origin`, its key made from `label`. */
export function signedLog(label: string, origin: string) {
  const logKey = seededKey(label);
  const id = noteKeyId(sha, origin, publicOf(logKey));
  const vkey = formatVerifierKey({ name: origin, id, publicKey: publicOf(logKey) });
  /** The proof of `tree[index]` in `tree`, against the signed checkpoint of `checkpointOf` (by default the same tree). */
  async function proof(tree: Uint8Array[], index: number, checkpointOf: Uint8Array[] = tree): Promise<string> {
    const mth = (leaves: Uint8Array[]) =>
      rangeHash(h, async (s, e) =>
        foldPerfect(
          h,
          leaves.slice(s, e).map((l) => h.leaf(l)),
        ),
      );
    const text = formatCheckpoint({ origin, size: checkpointOf.length, root: await mth(checkpointOf)(0, checkpointOf.length) });
    const checkpoint = `${text}\n${signatureLine({ name: origin, id }, sign(null, Buffer.from(text), logKey))}`;
    return formatTlogProof({ extra: null, index, proof: await inclusionProof(mth(tree), index, tree.length), checkpoint });
  }
  return { vkey, proof };
}
