/**
 * Which of a build's checkpoints its proofs are against, and where its statement is proven in it:
 * what the gateway serves (service/log-proofs.ts) and `mvr mirror` checks alike.
 */
import { parseCheckpoint, parseNote, verifyInclusion } from '#shared';
import { hasher } from '../core/crypto/hash.ts';
import type { TileTree } from '../core/tlog/tile-tree.ts';

/**
 * Where a build's statement is proven in a tree (`tree`, of the checkpoint's size, whose root is
 * `root`): at its last entry when that entry is the statement's (`leaf`, its leaf hash), for a build
 * that did not go live appended the live statement again and a verifier refuses a statement that is
 * not last (BUILD_SUPERSEDED); else at `manifestIndex`, where the build appended it, unchecked (the
 * caller checks it). The gateway serves statement proofs so, and `mvr mirror` checks a build so.
 */
export async function statementInclusion(
  tree: TileTree,
  manifestIndex: number,
  root: Uint8Array,
  leaf: Uint8Array,
): Promise<{ index: number; proof: Uint8Array[] }> {
  const last = tree.size - 1;
  if (manifestIndex < last) {
    const proof = await tree.inclusion(last);
    if (verifyInclusion(hasher, { size: tree.size, root }, { index: last, hash: leaf }, proof)) return { index: last, proof };
  }
  return { index: manifestIndex, proof: await tree.inclusion(manifestIndex) };
}

/**
 * Which of a build's checkpoints its proofs are against: its served checkpoint (`served-checkpoint`)
 * when that is of the same log and larger, else its own (`log-checkpoint`); null when it has none.
 * The gateway serves proofs so, and `mvr mirror` checks a build's statement so.
 */
export function servedCheckpointOf(own: Buffer | null, served: Buffer | null): string | null {
  if (own === null) return null;
  if (served === null) return own.toString('utf8');
  try {
    const [a, b] = [own, served].map((bytes) => parseCheckpoint(parseNote(bytes.toString('utf8')).text));
    return b!.origin === a!.origin && b!.size > a!.size ? served.toString('utf8') : own.toString('utf8');
  } catch {
    return own.toString('utf8');
  }
}
