import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Checkpoint, parseCheckpoint, parseNote } from '#shared';
import { hasher } from '../core/crypto/hash.ts';
import { MirrorRefusedError } from '../core/errors/errors.ts';
import { BUILD_STATEMENT_FILE, CURRENT_LINK, LOG_CHECKPOINT, LOG_DIR, MANIFEST_FILE, MIRROR_PUBLIC_DIR } from '../core/layout.ts';
import { parseManifest } from '../core/schemas/manifest.ts';
import { type TileFetch, TileTree } from '../core/tlog/tile-tree.ts';

// A mirror never rolls back (TUF's rollback rule, CT's and Go's checksum database's "the log only
// grows"): a build goes live in it only when its statement comes later in the log than the live
// build's, by a checkpoint that extends the one the live build was proven against. That checkpoint
// is the live build's own `public/log/checkpoint`, written by the mirror after its checks and
// swapped in with the build in one rename, so the saved state and the live build never disagree.

/** A build's place in the log: its statement's entry, proven against `checkpoint` (a signed note). */
export interface LogPosition {
  build: string;
  issuedAt: string;
  index: number;
  checkpoint: string;
}

/**
 * Where the mirror's live build stands, from its own folder (what it checked before it went live);
 * null when no build is live, or the live one has no checkpoint saved: the next build is then taken
 * as the checks allow, and its checkpoint saved.
 */
export async function livePosition(to: string): Promise<LogPosition | null> {
  const live = join(to, CURRENT_LINK);
  const [statement, manifest, checkpoint] = await Promise.all(
    [BUILD_STATEMENT_FILE, MANIFEST_FILE, join(MIRROR_PUBLIC_DIR, LOG_DIR, LOG_CHECKPOINT)].map((f) =>
      readFile(join(live, f)).catch(() => null),
    ),
  );
  if (!statement || !manifest || !checkpoint) return null;
  const index = parseManifest(manifest, join(live, MANIFEST_FILE)).log?.statement;
  if (index === undefined) return null;
  const { build, issued_at } = JSON.parse(statement.toString('utf8')) as { build: string; issued_at: string };
  return { build, issuedAt: issued_at, index, checkpoint: checkpoint.toString('utf8') };
}

/**
 * The refusal (MIRROR_REFUSED, naming both builds) when `next` would roll the mirror back from
 * `live`, else null: its statement is an earlier entry of the log than the live build's, or its
 * checkpoint is not an append-only extension of the live build's (another origin, fewer entries,
 * or an RFC 6962 consistency proof computed from the source's tiles that does not verify against
 * both roots). Returned, not thrown: `--allow-rollback` takes the build and says what it replaced.
 */
export async function rollbackRefusal(live: LogPosition, next: LogPosition, tiles: TileFetch): Promise<MirrorRefusedError | null> {
  const refuse = (why: string) =>
    new MirrorRefusedError(
      `build ${next.build} (issued ${next.issuedAt}) refused: ${why}; the mirror's live build ${live.build} (issued ${live.issuedAt}) stays live (a source rolled back; --allow-rollback takes it)`,
    );
  if (next.index < live.index)
    return refuse(`its statement is entry ${next.index} of the log, earlier than the live build's (entry ${live.index})`);
  const old = checkpointOf(live.checkpoint);
  const now = checkpointOf(next.checkpoint);
  if (now.origin !== old.origin) return refuse(`its checkpoint is of the log ${now.origin}, not ${old.origin}`);
  if (now.size < old.size)
    return refuse(`its checkpoint has ${now.size} entries, fewer than the ${old.size} the live build was proven against`);
  let consistent: boolean;
  try {
    consistent = await new TileTree(hasher, now.size, tiles).extends(old, now.root);
  } catch (error) {
    return refuse(
      `the consistency proof from the live build's checkpoint (size ${old.size}) cannot be computed from the source's tiles: ${(error as Error).message}`,
    );
  }
  return consistent
    ? null
    : refuse(
        `its checkpoint (size ${now.size}) is not an append-only extension of the live build's (size ${old.size}): an entry was rewritten`,
      );
}

const checkpointOf = (note: string): Checkpoint => parseCheckpoint(parseNote(note).text);
