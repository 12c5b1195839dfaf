import { decodeBase64, encodeBase64 } from './base64.ts';
import { NoteError } from './note.ts';

/** The first line of a C2SP tlog-proof (c2sp.org/tlog-proof). */
export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';

/** A tlog-proof: opaque extra data, an entry's index, its inclusion proof, and the signed checkpoint it is against. */
export interface TlogProof {
  extra: Uint8Array | null;
  index: number;
  proof: Uint8Array[];
  /** The checkpoint, verbatim: a signed note. */
  checkpoint: string;
}

export function formatTlogProof(p: TlogProof): string {
  const lines = [TLOG_PROOF_HEADER];
  if (p.extra) lines.push(`extra ${encodeBase64(p.extra)}`);
  lines.push(`index ${p.index}`, ...p.proof.map(encodeBase64), '');
  return `${lines.join('\n')}\n${p.checkpoint}`;
}

export function parseTlogProof(text: string): TlogProof {
  const lines = text.split('\n');
  if (lines[0] !== TLOG_PROOF_HEADER) throw new NoteError(`a tlog proof starts with the line "${TLOG_PROOF_HEADER}"`);
  let at = 1;
  let extra: Uint8Array | null = null;
  if (lines[at]?.startsWith('extra ')) {
    extra = decodeBase64(lines[at]!.slice(6));
    if (!extra) throw new NoteError('the extra line is not base64');
    at++;
  }
  const index = /^index (0|[1-9][0-9]{0,15})$/.exec(lines[at] ?? '');
  if (!index || !Number.isSafeInteger(Number(index[1]))) throw new NoteError(`line ${at + 1} of the proof is not "index <decimal>"`);
  at++;
  const proof: Uint8Array[] = [];
  for (; at < lines.length && lines[at] !== ''; at++) {
    const hash = decodeBase64(lines[at]!);
    if (hash?.length !== 32) throw new NoteError(`line ${at + 1} of the proof is not a 32-byte hash in base64`);
    proof.push(hash);
  }
  if (at >= lines.length) throw new NoteError('the proof has no blank line before its checkpoint');
  return { extra, index: Number(index[1]), proof, checkpoint: lines.slice(at + 1).join('\n') };
}
