import {
  type Checkpoint,
  decodeBase64,
  encodeBase64,
  equalBytes,
  type NoteVerifierKey,
  openNote,
  parseCheckpoint,
  parseNote,
  signatureLine,
  verifyConsistency,
} from '#shared';
import { verifyEd25519 } from '../../core/crypto/ed25519.ts';
import { hasher } from '../../core/crypto/hash.ts';
import { AddCheckpointSyntaxError, formatSize, parseAddCheckpoint, SIZE_CONTENT_TYPE } from '../protocol.ts';
import type { OriginState, WitnessState } from './state.ts';
import { cosign, type WitnessKey } from './witness-key.ts';

/**
 * A log a witness witnesses: its origin (the checkpoint's first line) and its verifier key, each
 * configured on its own. A key's name only SHOULD match the origin (sum.golang.org's origin is
 * "go.sum database tree"), so a log is found by its origin, never by its key's name.
 */
export interface WitnessedLog {
  origin: string;
  key: NoteVerifierKey;
}

/** A witness: its key, the logs it witnesses, its state and clock. */
export interface Witness {
  key: WitnessKey;
  logs: WitnessedLog[];
  state: WitnessState;
  /** ms since 1970; cosignatures carry its whole seconds. */
  clock: () => number;
}

/** An HTTP answer: status, content type, body. */
export interface Answer {
  status: number;
  contentType: string;
  body: string;
}

const text = (status: number, body: string): Answer => ({ status, contentType: 'text/plain; charset=utf-8', body: `${body}\n` });

/**
 * c2sp.org/tlog-witness add-checkpoint: 400 for a request that is not one (or an old size above
 * the checkpoint's), 404 for a log it does not witness, 403 when the log's signature does not
 * verify, 409 with its own size when `old` is not it, 422 when the proof does not lead from its
 * stored tree to the new one; else it stores the checkpoint (synced) and answers 200 with a
 * cosignature timestamped now. The checkpoint it already holds (same size and root) is
 * cosigned afresh without a write: a replay costs a signature, never a synced write.
 */
export async function addCheckpoint(witness: Witness, body: string): Promise<Answer> {
  let request;
  let checkpoint: Checkpoint;
  try {
    request = parseAddCheckpoint(body);
    checkpoint = parseCheckpoint(parseNote(request.checkpoint).text);
  } catch (error) {
    return text(400, error instanceof AddCheckpointSyntaxError ? error.message : `not a checkpoint: ${(error as Error).message}`);
  }
  const logs = witness.logs.filter((l) => l.origin === checkpoint.origin).map((l) => l.key);
  if (logs.length === 0) return text(404, `unknown log "${checkpoint.origin}"`);
  let signedText: string;
  try {
    signedText = openNote(request.checkpoint, logs, verifyEd25519);
  } catch (error) {
    return text(403, `the checkpoint is not signed by ${checkpoint.origin}: ${(error as Error).message}`);
  }
  if (request.oldSize > checkpoint.size) return text(400, `old size ${request.oldSize} is larger than the checkpoint's ${checkpoint.size}`);
  const logLines = parseNote(request.checkpoint)
    .signatures.filter((s) => logs.some((k) => k.name === s.name && k.id === s.id))
    .map((s) => signatureLine(s, s.signature))
    .join('');
  return witness.state.update(checkpoint.origin, (current) => {
    const size = current?.size ?? 0;
    if (request.oldSize !== size) return { result: { status: 409, contentType: SIZE_CONTENT_TYPE, body: formatSize(size) } };
    const problem = inconsistency(current, request.oldSize, request.proof, checkpoint);
    if (problem) return { result: text(422, problem) };
    const line = cosign(witness.key, signedText, Math.floor(witness.clock() / 1000));
    const ok = { status: 200, contentType: 'text/plain; charset=utf-8', body: line };
    // Its state already says this size and root: nothing to store (only the cosignature's time is new).
    if (current && current.size === checkpoint.size) return { result: ok };
    const next: OriginState = {
      size: checkpoint.size,
      root: encodeBase64(checkpoint.root),
      checkpoint: `${signedText}\n${logLines}${line}`,
    };
    return { next, result: ok };
  });
}

/** Why the checkpoint does not extend the stored one with this proof; null when it does. */
function inconsistency(current: OriginState | null, oldSize: number, proof: Uint8Array[], checkpoint: Checkpoint): string | null {
  if (checkpoint.size === 0 && !equalBytes(checkpoint.root, hasher.empty()))
    return 'a checkpoint of size 0 must have the root hash of the empty tree';
  if (oldSize === 0) return proof.length === 0 ? null : 'the consistency proof from size 0 must be empty';
  const oldRoot = decodeBase64(current!.root)!;
  if (oldSize === checkpoint.size)
    return proof.length === 0 && equalBytes(oldRoot, checkpoint.root)
      ? null
      : `the root hash at size ${oldSize} differs from the one cosigned`;
  return verifyConsistency(hasher, { size: oldSize, root: oldRoot }, checkpoint, proof)
    ? null
    : `the consistency proof from size ${oldSize} to ${checkpoint.size} does not verify`;
}
