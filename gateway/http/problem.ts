import type { H3Event } from 'h3';
import { MvrError } from '../../core/errors.ts';
import { UnauthorizedError } from '../api-keys.ts';
import { reply } from './reply.ts';
import { RateLimitedError, rateLimitHeaders } from '../rate-limit.ts';

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
 * Sends an error as `application/problem+json`, with the headers its status calls for
 * (`WWW-Authenticate` on 401, `Allow` on 405); errors are never cached.
 */
export async function sendProblem(event: H3Event, error: unknown, issuer: string): Promise<void> {
  const { status, text, code } = serializedProblem(error, issuer);
  event.context.errorCode = code;
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  if (error instanceof UnauthorizedError) {
    headers['www-authenticate'] = error.keySent
      ? 'Bearer realm="merchant-verify", error="invalid_token", error_description="the API key is not valid"'
      : 'Bearer realm="merchant-verify"';
  }
  if (error instanceof MethodNotAllowedError) headers.allow = error.allow.join(', ');
  if (error instanceof RateLimitedError) Object.assign(headers, { 'retry-after': String(error.decision.resetSeconds) }, rateLimitHeaders(error.decision));
  await reply(event, status, { ...headers, 'content-type': 'application/problem+json' }, text);
}

/** Problem documents repeat (a flood of bad keys gets the same one), so their text is kept, bounded. */
const serialized = new Map<string, { status: number; text: Buffer; code: string }>();
function serializedProblem(error: unknown, issuer: string): { status: number; text: Buffer; code: string } {
  const key = error instanceof MvrError ? `${issuer}\u0000${error.code}\u0000${error.message}` : null;
  const hit = key === null ? undefined : serialized.get(key);
  if (hit) return hit;
  const { status, body, code } = problemBody(error, issuer);
  const value = { status, code, text: Buffer.from(JSON.stringify(body)) };
  if (key !== null) {
    if (serialized.size >= 1000) serialized.clear();
    serialized.set(key, value);
  }
  return value;
}
