import { MethodNotAllowedError, RateLimitedError, UnauthorizedError } from '@merchant-verify/verifier/errors';
import { problemDocument } from '../core/problem-document.ts';
import type { Answer } from './answer.ts';
import { PROBLEM_CACHE_HEADERS } from './cache-policy.ts';

/**
 * The RFC 9457 `application/problem+json` answer for an error: status and title from the error
 * registry, `detail` from the error (never from an unexpected one), and the headers its status
 * calls for (`WWW-Authenticate` on 401, `Allow` on 405, `Retry-After` on 429). Never cached.
 */
export function problemAnswer(error: unknown, issuer: string): Answer {
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
