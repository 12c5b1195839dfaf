import { randomUUID } from 'node:crypto';
import type { H3Event } from 'h3';
import {
  isMvrError,
  MethodNotAllowedError,
  RangeNotSatisfiableError,
  RateLimitedError,
  TooManyStreamsError,
  UnauthorizedError,
} from '../core/errors/errors.ts';
import { causeOf, httpCodeOf, problemDocument, withheldDetail } from '../core/errors/problem-document.ts';
import type { Answer } from './answer.ts';
import { PROBLEM_CACHE_HEADERS } from './cache-policy.ts';
import type { GatewayServices } from './context.ts';
import { pathOf } from './query.ts';

/**
 * The RFC 9457 `application/problem+json` answer for an error: status and title from the error
 * registry, `detail` from the error (never from an unexpected one), and the headers its status
 * calls for (`WWW-Authenticate` on 401, `Allow` on 405, `Content-Range` on 416, `Retry-After` on 429). Never cached.
 * A server failure says its code's words and `requestId` (see {@link noteWithheld}), never where.
 */
export function problemAnswer(error: unknown, issuer: string, requestId?: string): Answer {
  // A refusal made once (the three 401s, see access/api-keys.ts) is the same answer every time:
  // made once per error too, its body already bytes, so a flood of bad keys costs no more than
  // a flood of good ones.
  if (error instanceof UnauthorizedError) {
    const made = refusals.get(error);
    if (made?.issuer === issuer) return made.answer;
    const answer = buildProblemAnswer(error, issuer);
    // Frozen: every 401 shares it, so no caller may add a header to it.
    refusals.set(error, {
      issuer,
      answer: Object.freeze({ ...answer, headers: Object.freeze(answer.headers), body: Buffer.from(answer.body as string) }),
    });
    return answer;
  }
  return buildProblemAnswer(error, issuer, requestId);
}

const refusals = new WeakMap<UnauthorizedError, { issuer: string; answer: Answer }>();

function buildProblemAnswer(error: unknown, issuer: string, requestId?: string): Answer {
  const problem = problemDocument(error, issuer, requestId);
  const headers: Record<string, string> = { 'content-type': 'application/problem+json', ...PROBLEM_CACHE_HEADERS };
  if (error instanceof UnauthorizedError) {
    headers['www-authenticate'] = error.keySent
      ? 'Bearer realm="merchant-verify", error="invalid_token", error_description="the API key is not valid"'
      : 'Bearer realm="merchant-verify"';
  }
  if (error instanceof MethodNotAllowedError) headers.allow = error.allow.join(', ');
  if (error instanceof RateLimitedError || error instanceof TooManyStreamsError) headers['retry-after'] = String(error.retryAfterSeconds);
  if (error instanceof RangeNotSatisfiableError) headers['content-range'] = `bytes */${error.size}`;
  return { status: problem.status, headers, body: JSON.stringify(problem) };
}

/**
 * Answers say what, logs say where: for an error whose problem document withholds its message (a
 * server failure, see `withheldDetail`), logs that message, its causes, the request's method and
 * path and the domain asked about, under the request's id (made at the first such error of a
 * request, and written in its access line too); returns the id for the answer to carry.
 * Undefined for any other error: its answer says all there is.
 */
export function noteWithheld(event: H3Event, services: GatewayServices, error: unknown, domain?: string): string | undefined {
  const code = httpCodeOf(error);
  if (withheldDetail(code) === null) return undefined;
  event.context.requestId ??= randomUUID();
  const ours = isMvrError(error);
  services.log({
    level: ours ? 'warn' : 'error',
    msg: ours ? 'request failed' : 'unhandled error',
    request_id: event.context.requestId,
    method: event.method,
    path: pathOf(event),
    ...((domain ?? event.context.domain) ? { domain: domain ?? event.context.domain } : {}),
    code,
    error: causeOf(error),
  });
  return event.context.requestId;
}
