import { READ_LIMITS, readBounded } from '#shared';
import type { ErrorCode } from '../../core/errors/errors.ts';

/**
 * One add-checkpoint exchange with a witness over HTTP, and what its answer means. The request
 * goes to the witness's own URL, through the one capped reader (packages/shared): a redirect is an
 * answer, never followed (a witness that moved says so in the policy, not by sending the checkpoint
 * elsewhere); an answer is read up to MAX_ANSWER_BYTES within the deadline, and a longer one is refused.
 */

/** A witness that said no, or that could not be asked (busy, 5xx, timeout, no connection): try again later. */
export type WitnessFailureCode = Extract<ErrorCode, 'WITNESS_REFUSED' | 'WITNESS_UNAVAILABLE'>;

/** The most an answer may hold (the limits table, core/limits.ts). */
export const MAX_ANSWER_BYTES = READ_LIMITS.witnessAnswer.bytes;

/** What one add-checkpoint request got: an HTTP answer, or why there was none. */
export type Reply =
  | { status: number; body: string; retryAfter: string | null; location: string | null }
  | { status: null; code: WitnessFailureCode; message: string };

/** POSTs a request body to `url`, within the timeout; the answer's body read up to the cap. */
export async function post(url: string, body: string, timeoutMs: number): Promise<Reply> {
  const answer = await readBounded(url, { bytes: MAX_ANSWER_BYTES, deadlineMs: timeoutMs }, { method: 'POST', body });
  if (!('failure' in answer)) {
    const text = new TextDecoder().decode(answer.bytes);
    return { status: answer.status, body: text, retryAfter: answer.headers.get('retry-after'), location: answer.headers.get('location') };
  }
  if (answer.failure === 'tooLarge')
    return { status: null, code: 'WITNESS_REFUSED', message: `answered ${answer.status} with more than ${MAX_ANSWER_BYTES} bytes` };
  if (answer.failure === 'deadline') return { status: null, code: 'WITNESS_UNAVAILABLE', message: `did not answer within ${timeoutMs} ms` };
  const e = answer.error as Error;
  return {
    status: null,
    code: 'WITNESS_UNAVAILABLE',
    message: `could not be reached at ${url}: ${(e.cause as Error | undefined)?.message ?? e.message}`,
  };
}

/**
 * What a witness's answer other than 200 and a 409 with its size means, as the two public
 * implementations give them: litewitness answers 403 both for a log it does not know and for a
 * signature that does not verify; transparency-dev's witness answers 404 for an unknown log, 422
 * for a same-size root mismatch (an older version a 409 without a body), 429 when it pushes back.
 * A busy or failing witness (429, 5xx) is unavailable, to be asked again; every other answer
 * refuses this checkpoint. The answer's first line, if any, is quoted (printable ASCII only).
 */
export function failureOf(reply: { status: number; body: string; retryAfter: string | null; location: string | null }): {
  code: WitnessFailureCode;
  message: string;
} {
  const { status } = reply;
  const said = firstLine(reply.body);
  const refused = (why: string) => ({ code: 'WITNESS_REFUSED' as const, message: `${why}${said ? `: "${said}"` : ''}` });
  if (status >= 300 && status < 400)
    return refused(
      `answered ${status}, a redirect${reply.location ? ` to ${firstLine(reply.location)}` : ''}, which is not followed: give its own submission prefix in the policy`,
    );
  if (status === 400) return refused('refused the request as malformed (400)');
  if (status === 403)
    return refused("refused the checkpoint (403): it does not witness this log, or the log's signature does not verify for it");
  if (status === 404)
    return refused('answered 404: it does not witness this log, or the policy URL is not the prefix it serves add-checkpoint under');
  if (status === 409)
    return refused('answered 409 without its size: it holds another checkpoint of this log at this size (another root hash)');
  if (status === 422) return refused('refused the consistency proof, or holds another root hash at this size (422)');
  if (status === 429) {
    const after = reply.retryAfter ? firstLine(reply.retryAfter) : '';
    return { code: 'WITNESS_UNAVAILABLE', message: `is busy (429)${after ? `, and asks to be asked again after ${after}` : ''}` };
  }
  if (status >= 500) return { code: 'WITNESS_UNAVAILABLE', message: `answered ${status}${said ? `: "${said}"` : ''}` };
  return refused(`answered ${status}`);
}

/** The first line of a text, printable ASCII only, at most 120 characters (a witness's words, quoted safely). */
function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line
    .replace(/[^\x20-\x7e]/g, '?')
    .slice(0, 120)
    .trim();
}
