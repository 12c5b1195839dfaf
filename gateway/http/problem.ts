import { MvrError } from '../../core/errors.ts';
import { UnauthorizedError } from '../api-keys.ts';
import { SharedHeaders, type Answer, type RequestNote } from '../context.ts';
import { RateLimitedError } from '../rate-limit.ts';
import { decimal } from '../decimal.ts';

/** A request to a path the gateway does not serve. */
export class NotFoundError extends MvrError {
  constructor(path: string) {
    super('NOT_FOUND', `no resource at ${path}`);
  }
}

/** A known path asked with a method it does not support. */
export class MethodNotAllowedError extends MvrError {
  constructor(method: string, readonly allow: string[]) {
    super('METHOD_NOT_ALLOWED', `${method} is not allowed here; use ${allow.join(', ')}`);
  }
}

/** The HTTP status and title of every code the gateway answers with. */
export const PROBLEMS: Record<string, { status: number; title: string }> = {
  INVALID_DOMAIN: { status: 400, title: 'Invalid domain' },
  UNAUTHORIZED: { status: 401, title: 'Unauthorized' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  INTERNAL: { status: 500, title: 'Internal error' },
  STORE_UNAVAILABLE: { status: 503, title: 'Verification records unavailable' },
  UNAVAILABLE: { status: 503, title: 'Record temporarily unavailable' },
};

/** The `type` URI of a problem code: `https://{issuer}/problems/invalid-domain`. */
export function problemType(issuer: string, code: string): string {
  return `https://${issuer}/problems/${code.toLowerCase().replace(/_/g, '-')}`;
}

/** RFC 9457 problem document body for an error; unknown errors become INTERNAL without details. */
export function problemBody(error: unknown, issuer: string): { status: number; body: Record<string, unknown>; code: string } {
  const known = error instanceof MvrError && PROBLEMS[error.code] ? error : null;
  const code = known?.code ?? 'INTERNAL';
  const { status, title } = PROBLEMS[code]!;
  const detail = known ? known.message : 'an unexpected error occurred; it has been logged';
  return {
    status,
    code,
    body: { type: problemType(issuer, code), title, status, detail, code },
  };
}

/**
 * The `application/problem+json` answer for an error, with the headers its status calls for
 * (`WWW-Authenticate` on 401, `Allow` on 405); errors are never cached. Its code is noted for the access log.
 */
export function problemAnswer(error: unknown, issuer: string, note: RequestNote): Answer {
  const { status, code, headers, text } = preparedProblem(error, issuer);
  note.errorCode = code;
  if (!(error instanceof RateLimitedError)) return { status, headers, more: null, quota: null, body: text };
  const d = error.decision;
  return { status, headers, more: ['retry-after', decimal(d.resetSeconds)], quota: d, body: text };
}

interface PreparedProblem {
  status: number;
  code: string;
  /** Content-Length included; shared by every answer with this problem. */
  headers: SharedHeaders;
  text: Buffer;
}

/**
 * Problem documents repeat (a flood of bad keys gets the same one), so their text and headers are
 * kept, by issuer, code and message, bounded.
 */
const prepared = new Map<string, PreparedProblem>();
function preparedProblem(error: unknown, issuer: string): PreparedProblem {
  const key = error instanceof MvrError ? `${issuer}\u0000${error.code}\u0000${error.message}\u0000${error instanceof UnauthorizedError && error.keySent}` : null;
  const hit = key === null ? undefined : prepared.get(key);
  if (hit) return hit;
  const { status, body, code } = problemBody(error, issuer);
  const headers = ['cache-control', 'no-store', 'content-type', 'application/problem+json'];
  if (error instanceof UnauthorizedError) {
    headers.push(
      'www-authenticate',
      error.keySent ? 'Bearer realm="merchant-verify", error="invalid_token", error_description="the API key is not valid"' : 'Bearer realm="merchant-verify"',
    );
  }
  if (error instanceof MethodNotAllowedError) headers.push('allow', error.allow.join(', '));
  const text = Buffer.from(JSON.stringify(body));
  headers.push('content-length', String(text.length));
  const value = { status, code, headers: new SharedHeaders(headers), text };
  if (key !== null) {
    if (prepared.size >= 1000) prepared.clear();
    prepared.set(key, value);
  }
  return value;
}
