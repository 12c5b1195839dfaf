import { MethodNotAllowedError, RateLimitedError, UnauthorizedError } from '../core/errors.ts';
import { problemDocument } from '../core/problem-document.ts';
import type { Answer } from './answer.ts';
import { PROBLEM_CACHE_HEADERS } from './cache-policy.ts';

/**
 * The RFC 9457 `application/problem+json` answer for an error: status and title from the error
 * registry, `detail` from the error (never from an unexpected one), and the headers its status
 * calls for (`WWW-Authenticate` on 401, `Allow` on 405, `Retry-After` on 429). Never cached.
 */
export function problemAnswer(error: unknown, issuer: string): Answer {
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
  return buildProblemAnswer(error, issuer);
}

const refusals = new WeakMap<UnauthorizedError, { issuer: string; answer: Answer }>();

function buildProblemAnswer(error: unknown, issuer: string): Answer {
  const problem = problemDocument(error, issuer);
  const headers: Record<string, string> = { 'content-type': 'application/problem+json', ...PROBLEM_CACHE_HEADERS };
  if (error instanceof UnauthorizedError) {
    headers['www-authenticate'] = error.keySent
      ? 'Bearer realm="merchant-verify", error="invalid_token", error_description="the API key is not valid"'
      : 'Bearer realm="merchant-verify"';
  }
  if (error instanceof MethodNotAllowedError) headers.allow = error.allow.join(', ');
  if (error instanceof RateLimitedError) headers['retry-after'] = String(error.retryAfterSeconds);
  return { status: problem.status, headers, body: JSON.stringify(problem) };
}
