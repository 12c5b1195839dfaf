import { decodeBase64, encodeBase64 } from '#shared';

/**
 * The text formats of c2sp.org/tlog-witness add-checkpoint, shared by the witness and its
 * client: the request body (`old <size>`, consistency proof lines, an empty line, the signed
 * checkpoint), and the 409 answer's body (`text/x.tlog.size`, the witness's size and a newline).
 */

export interface AddCheckpointRequest {
  oldSize: number;
  proof: Uint8Array[];
  /** The signed checkpoint note, verbatim. */
  checkpoint: string;
}

/** A client sends at most this many consistency proof lines. */
export const MAX_PROOF_LINES = 63;
export const SIZE_CONTENT_TYPE = 'text/x.tlog.size';
const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/** A request body that is not an add-checkpoint request (the witness answers 400). */
export class AddCheckpointSyntaxError extends Error {}

export function formatAddCheckpoint(r: AddCheckpointRequest): string {
  return [`old ${r.oldSize}`, ...r.proof.map(encodeBase64), '', r.checkpoint].join('\n');
}

export function parseAddCheckpoint(body: string): AddCheckpointRequest {
  const fail = (message: string): never => {
    throw new AddCheckpointSyntaxError(message);
  };
  const blank = body.indexOf('\n\n');
  if (blank < 0) fail('the body has no empty line before the checkpoint');
  const head = body.slice(0, blank).split('\n');
  const old = /^old (.*)$/.exec(head[0]!);
  if (!old || !DECIMAL.test(old[1]!) || !Number.isSafeInteger(Number(old[1])))
    fail('the first line is not "old <size>", a decimal without leading zeros');
  const lines = head.slice(1);
  if (lines.length > MAX_PROOF_LINES) fail(`more than ${MAX_PROOF_LINES} consistency proof lines`);
  const proof = lines.map((line, i) => {
    const hash = decodeBase64(line);
    return hash && hash.length === 32 ? hash : fail(`line ${i + 2} is not a 32-byte hash in base64`);
  });
  return { oldSize: Number(old![1]), proof, checkpoint: body.slice(blank + 2) };
}

export function formatSize(size: number): string {
  return `${size}\n`;
}

/** The witness's size from a 409 body; null when the body is not one. */
export function parseSize(body: string): number | null {
  const m = /^(0|[1-9][0-9]{0,15})\n$/.exec(body);
  return m && Number.isSafeInteger(Number(m[1])) ? Number(m[1]) : null;
}
