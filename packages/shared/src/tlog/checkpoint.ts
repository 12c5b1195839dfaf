import { decodeBase64, encodeBase64 } from './base64.ts';
import { NoteError } from './note.ts';

/** A C2SP checkpoint's text (c2sp.org/tlog-checkpoint): origin, tree size, root hash. */
export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
}

export function formatCheckpoint(c: Checkpoint): string {
  return `${c.origin}\n${c.size}\n${encodeBase64(c.root)}\n`;
}

/** Parses a checkpoint's note text (already opened: its signature checked). Extension lines are allowed and ignored. */
export function parseCheckpoint(text: string): Checkpoint {
  const lines = text.split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '')
    throw new NoteError('a checkpoint is at least three lines: origin, tree size, root hash');
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (origin === '') throw new NoteError('the checkpoint has an empty origin line');
  if (!/^(0|[1-9][0-9]{0,15})$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText)))
    throw new NoteError(`checkpoint tree size "${sizeText}" is not a decimal number without leading zeros`);
  const root = decodeBase64(rootText);
  if (root?.length !== 32) throw new NoteError('the checkpoint root hash is not 32 bytes of base64');
  if (lines.slice(3, -1).some((l) => l === '')) throw new NoteError('a checkpoint extension line is empty');
  return { origin, size: Number(sizeText), root };
}
