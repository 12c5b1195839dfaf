import {
  cosignedMessage,
  type PolicyWitness,
  parseCheckpoint,
  parseCosignature,
  parseNote,
  quorumMet,
  type TlogPolicy,
} from '@merchant-verify/verifier/internal/tlog';
import type { ErrorCode } from '../core/errors.ts';
import { nodeEd25519VerifyRaw } from './ed25519.ts';
import { formatAddCheckpoint, parseSize } from './protocol.ts';

/**
 * The client side of c2sp.org/tlog-witness: submit a checkpoint to each witness of a policy,
 * with the consistency proof from the size that witness last cosigned, and collect the
 * cosignatures. One witness's failure is a result naming it, never an exception.
 */

/** The consistency proof from `oldSize` to the submitted checkpoint's size. */
export type ProofFor = (oldSize: number) => Promise<Uint8Array[]>;

/** A witness that said no (400, 403, 404, 409, 422, no valid cosignature), or that could not be asked (5xx, timeout, no connection). */
export type WitnessFailureCode = Extract<ErrorCode, 'WITNESS_REFUSED' | 'WITNESS_UNAVAILABLE'>;

export type Submission =
  | { witness: string; ok: true; line: string; time: number }
  | { witness: string; ok: false; code: WitnessFailureCode; status: number | null; message: string };

export interface SubmitOptions {
  /** The size the witness is believed to have cosigned last (0 when unknown: its 409 tells). */
  oldSize?: number;
  /** How long one request may take, ms. */
  timeoutMs: number;
}

const REFUSALS: Record<number, string> = {
  400: 'refused the request as malformed (400)',
  403: 'refused the checkpoint: the log signature does not verify for it (403)',
  404: 'does not witness this log (404)',
  422: 'refused the consistency proof (422)',
};

/** What one add-checkpoint request got: an HTTP answer, or why there was none. */
type Reply = { status: number; body: string } | { status: null; code: WitnessFailureCode; message: string };

/**
 * Sends the checkpoint (a signed note) to one witness. On 409 it learns the witness's size and
 * sends once more with the proof from that size. A 200 must hold a valid cosignature by the
 * witness's key over this checkpoint.
 */
export async function submitCheckpoint(
  witness: PolicyWitness,
  checkpoint: string,
  proofFor: ProofFor,
  options: SubmitOptions,
): Promise<Submission> {
  const fail = (code: WitnessFailureCode, status: number | null, message: string): Submission => ({
    witness: witness.name,
    ok: false,
    code,
    status,
    message: `witness ${witness.name} ${message}`,
  });
  if (!witness.url) return fail('WITNESS_REFUSED', null, 'has no URL in the policy');
  const url = `${witness.url.replace(/\/+$/, '')}/add-checkpoint`;
  // The caller's own checkpoint: one that does not parse is the caller's mistake, thrown.
  const { size } = parseCheckpoint(parseNote(checkpoint).text);
  const sendFrom = async (oldSize: number): Promise<Reply> => {
    if (oldSize > size)
      return {
        status: null,
        code: 'WITNESS_REFUSED',
        message: `has cosigned size ${oldSize}, larger than this checkpoint's ${size}: it saw a longer tree of this log`,
      };
    let proof: Uint8Array[];
    try {
      proof = oldSize === 0 || oldSize === size ? [] : await proofFor(oldSize);
    } catch (error) {
      return {
        status: null,
        code: 'WITNESS_REFUSED',
        message: `has cosigned size ${oldSize}, from which the log has no consistency proof to this checkpoint: ${(error as Error).message}`,
      };
    }
    return post(url, formatAddCheckpoint({ oldSize, proof, checkpoint }), options.timeoutMs);
  };
  let reply = await sendFrom(Math.min(options.oldSize ?? 0, size));
  if (reply.status === 409) {
    const theirs = parseSize(reply.body);
    if (theirs === null) return fail('WITNESS_REFUSED', 409, 'answered 409 without its size (text/x.tlog.size)');
    reply = await sendFrom(theirs);
    // A witness ahead of this checkpoint answered 409 with a size the log cannot prove from.
    if (reply.status === null && theirs > size) return fail(reply.code, 409, reply.message);
    if (reply.status === 409) return fail('WITNESS_REFUSED', 409, `answered 409 twice (its size ${parseSize(reply.body) ?? '?'})`);
  }
  if (reply.status === null) return fail(reply.code, null, reply.message);
  if (reply.status === 200)
    return (
      cosignatureIn(witness, checkpoint, reply.body) ?? fail('WITNESS_REFUSED', 200, 'answered without a valid cosignature by its key')
    );
  if (reply.status >= 500) return fail('WITNESS_UNAVAILABLE', reply.status, `answered ${reply.status}`);
  return fail('WITNESS_REFUSED', reply.status, REFUSALS[reply.status] ?? `answered ${reply.status}`);
}

/** POSTs a request body, within the timeout. */
async function post(url: string, body: string, timeoutMs: number): Promise<Reply> {
  try {
    const res = await fetch(url, { method: 'POST', body, signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, body: await res.text() };
  } catch (error) {
    const e = error as Error;
    return {
      status: null,
      code: 'WITNESS_UNAVAILABLE',
      message:
        e.name === 'TimeoutError'
          ? `did not answer within ${timeoutMs} ms`
          : `could not be reached at ${url}: ${(e.cause as Error | undefined)?.message ?? e.message}`,
    };
  }
}

/** The witness's valid cosignature line among the answer's lines (others ignored); null when there is none. */
function cosignatureIn(
  witness: PolicyWitness,
  checkpoint: string,
  body: string,
): { witness: string; ok: true; line: string; time: number } | null {
  let text: string;
  let signatures;
  try {
    text = parseNote(checkpoint).text;
    signatures = parseNote(`${text}\n${body}`).signatures;
  } catch {
    return null;
  }
  const lines = body.split('\n');
  for (const [i, s] of signatures.entries()) {
    if (s.name !== witness.vkey.name || s.id !== witness.vkey.id) continue;
    const cosig = parseCosignature(s.signature);
    if (cosig && nodeEd25519VerifyRaw(cosig.signature, cosignedMessage(text, cosig.time), witness.vkey.publicKey)) {
      return { witness: witness.name, ok: true, line: `${lines[i]}\n`, time: Number(cosig.time) * 1000 };
    }
  }
  return null;
}

export interface Collected {
  /** Every witness's submission, in the policy's order. */
  submissions: Submission[];
  /** The checkpoint with the cosignatures received appended as signature lines. */
  checkpoint: string;
  quorum: boolean;
}

/**
 * Submits the checkpoint to every witness of the policy at once and says whether the cosignatures
 * received meet its quorum. `oldSizes` gives, by witness name, the size each last cosigned.
 */
export async function collectCosignatures(
  policy: TlogPolicy,
  checkpoint: string,
  proofFor: ProofFor,
  options: { timeoutMs: number; oldSizes?: ReadonlyMap<string, number> },
): Promise<Collected> {
  const submissions = await Promise.all(
    policy.witnesses.map((w) =>
      submitCheckpoint(w, checkpoint, proofFor, { timeoutMs: options.timeoutMs, oldSize: options.oldSizes?.get(w.name) ?? 0 }),
    ),
  );
  const lines = submissions.flatMap((s) => (s.ok ? [s.line] : []));
  return {
    submissions,
    checkpoint: checkpoint + lines.join(''),
    quorum: quorumMet(policy.quorum, new Set(submissions.filter((s) => s.ok).map((s) => s.witness))),
  };
}
