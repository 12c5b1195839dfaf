import { ERROR_REGISTRY, MethodNotAllowedError, isMvrError, type MvrError, RateLimitedError, UnauthorizedError, type ErrorCode } from '../core/errors.ts';
import type { Answer } from './answer.ts';

/** The `type` URI of a problem code: `https://{issuer}/problems/invalid-domain`. */
export function problemType(issuer: string, code: string): string {
  return `https://${issuer}/problems/${code.toLowerCase().replace(/_/g, '-')}`;
}

/** The error's code when the HTTP API answers with it; anything else is INTERNAL. */
export function httpCodeOf(error: unknown): ErrorCode {
  return isMvrError(error) && ERROR_REGISTRY[error.code].status !== null ? error.code : 'INTERNAL';
}

/**
 * The RFC 9457 `application/problem+json` answer for an error: status and title from the error
 * registry, `detail` from the error (never from an unexpected one), and the headers its status
 * calls for (`WWW-Authenticate` on 401, `Allow` on 405, `Retry-After` on 429). Never cached.
 */
export function problemAnswer(error: unknown, issuer: string): Answer {
  const code = httpCodeOf(error);
  const { status, title } = ERROR_REGISTRY[code];
  const detail = code === 'INTERNAL' ? 'an unexpected error occurred; it has been logged' : (error as MvrError).message;
  const headers: Record<string, string> = { 'content-type': 'application/problem+json', 'cache-control': 'no-store' };
  if (error instanceof UnauthorizedError) {
    headers['www-authenticate'] = error.keySent
      ? 'Bearer realm="merchant-verify", error="invalid_token", error_description="the API key is not valid"'
      : 'Bearer realm="merchant-verify"';
  }
  if (error instanceof MethodNotAllowedError) headers.allow = error.allow.join(', ');
  if (error instanceof RateLimitedError) headers['retry-after'] = String(error.retryAfterSeconds);
  return { status: status!, headers, body: JSON.stringify({ type: problemType(issuer, code), title, status, detail, code }) };
}
