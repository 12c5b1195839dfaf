import { send, type H3Event } from 'h3';

/**
 * Writes a whole response: status, headers and body, with an explicit Content-Length so HEAD
 * answers carry the length of the GET body (Node drops the body of a HEAD response itself).
 */
export async function reply(event: H3Event, status: number, headers: Record<string, string>, body: string | Buffer | null): Promise<void> {
  const res = event.node.res;
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (body === null) {
    await send(event);
    return;
  }
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  res.setHeader('content-length', String(bytes.length));
  await send(event, bytes);
}

/** Weak comparison of If-None-Match against an entity tag (RFC 9110 13.1.2). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === bare);
}

/** Query parameters from the raw request target. */
export function queryOf(event: H3Event): URLSearchParams {
  const path = event.node.req.url ?? '/';
  const q = path.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : path.slice(q + 1));
}
