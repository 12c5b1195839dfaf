import { cosignedMessage, type PolicyWitness, parseCheckpoint, parseCosignature, parseNote, quorumMet, type TlogPolicy } from '#shared';
import { verifyEd25519 } from '../../core/crypto/ed25519.ts';
import { formatAddCheckpoint, parseSize } from '../protocol.ts';
import { failureOf, post, type Reply, type WitnessFailureCode } from './exchange.ts';

export type { WitnessFailureCode } from './exchange.ts';

/**
 * The client side of c2sp.org/tlog-witness: submit a checkpoint to each witness of a policy,
 * with the consistency proof from the size that witness last cosigned, and collect the
 * cosignatures. One witness's failure is a result naming it, never an exception.
 */

/** The consistency proof from `oldSize` to the submitted checkpoint's size. */
export type ProofFor = (oldSize: number) => Promise<Uint8Array[]>;

export type Submission =
  | { witness: string; ok: true; line: string; time: number }
  | { witness: string; ok: false; code: WitnessFailureCode; status: number | null; message: string };

export interface SubmitOptions {
  /** The size the witness is believed to have cosigned last (0 when unknown: its 409 tells). */
  oldSize?: number;
  /** How long one request may take, ms. */
  timeoutMs: number;
}

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
  const endpoint = endpointUrlProblem(witness.url);
  if (endpoint) return fail('WITNESS_REFUSED', null, endpoint);
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
    if (theirs === null) return fail('WITNESS_REFUSED', 409, failureOf(reply).message);
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
  const failure = failureOf(reply);
  return fail(failure.code, reply.status, failure.message);
}

/**
 * Why a policy's witness URL is not one: c2sp.org/tlog-policy names the submission prefix, under
 * which the witness serves `<prefix>/add-checkpoint`; a URL of the endpoint itself would be posted
 * to `.../add-checkpoint/add-checkpoint` and answered 404. Null for a prefix.
 */
export function endpointUrlProblem(url: string): string | null {
  return /\/add-checkpoint\/*$/.test(url)
    ? `has the URL ${url} in the policy, the add-checkpoint endpoint itself: a policy names the submission prefix (drop "/add-checkpoint")`
    : null;
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
    if (cosig && verifyEd25519(cosig.signature, cosignedMessage(text, cosig.time), witness.vkey.publicKey)) {
      return { witness: witness.name, ok: true, line: `${lines[i]}\n`, time: Number(cosig.time) * 1000 };
    }
  }
  return null;
}

/** One witness's answer, for progress lines, summaries and `--json`. */
export interface WitnessReport {
  witness: string;
  ok: boolean;
  /** The cosignature's time (ISO 8601) when it cosigned; why not when it did not. */
  time?: string;
  code?: string;
  status?: number | null;
  message?: string;
}

/**
 * The one result of asking a policy's witnesses to cosign a checkpoint (the client's round, and
 * the build phase's, which adds the earlier cosignatures of witnesses that did not answer).
 */
export interface Cosigned {
  /** The checkpoint with the cosignatures received (and any kept) appended as signature lines. */
  checkpoint: string;
  /** Whether the cosignatures on `checkpoint`, fresh or kept, meet the policy's quorum. */
  quorum: boolean;
  /** Whether the cosignatures received this time alone meet the quorum. */
  freshQuorum: boolean;
  /** Every witness's answer, in the policy's order. */
  witnesses: WitnessReport[];
}

/** A submission as a report: the cosignature's time, or the code, status and message of the failure. */
export const reportOf = (s: Submission): WitnessReport =>
  s.ok
    ? { witness: s.witness, ok: true, time: new Date(s.time).toISOString() }
    : { witness: s.witness, ok: false, code: s.code, status: s.status, message: s.message };

/**
 * Submits the checkpoint to every witness of the policy at once and says whether the cosignatures
 * received meet its quorum. `oldSizes` gives, by witness name, the size each last cosigned.
 */
export async function collectCosignatures(
  policy: TlogPolicy,
  checkpoint: string,
  proofFor: ProofFor,
  options: { timeoutMs: number; oldSizes?: ReadonlyMap<string, number> },
): Promise<Cosigned> {
  const submissions = await Promise.all(
    policy.witnesses.map((w) =>
      submitCheckpoint(w, checkpoint, proofFor, { timeoutMs: options.timeoutMs, oldSize: options.oldSizes?.get(w.name) ?? 0 }),
    ),
  );
  const lines = submissions.flatMap((s) => (s.ok ? [s.line] : []));
  const quorum = quorumMet(policy.quorum, new Set(submissions.filter((s) => s.ok).map((s) => s.witness)));
  return { checkpoint: checkpoint + lines.join(''), quorum, freshQuorum: quorum, witnesses: submissions.map(reportOf) };
}
