import type { H3Event } from 'h3';
import { createHash } from 'node:crypto';
import { SharedHeaders, type Answer } from '../context.ts';
import { rateLimitFields } from '../rate-limit.ts';

/**
 * Writes a whole response: status, headers and body, with an explicit Content-Length so HEAD
 * answers carry the length of the GET body (Node drops the body of a HEAD response itself).
 * The header list is taken over: Content-Length is appended to it.
 */
export function reply(event: H3Event, status: number, headers: Record<string, string> | string[], body: string | Buffer | null): Promise<void> {
  const bytes = body === null ? null : typeof body === 'string' ? Buffer.from(body) : body;
  const flat: string[] = Array.isArray(headers) ? headers : [];
  if (!Array.isArray(headers)) for (const name in headers) flat.push(name, headers[name]!);
  if (bytes) flat.push('content-length', String(bytes.length));
  return sendAnswer(event, { status, headers: new SharedHeaders(flat), more: null, quota: null, body: bytes });
}

/**
 * Writes an answer whose header lists are complete (Content-Length included), with one writeHead
 * and a flat name/value list: the cheapest way through Node's header handling. Shared lists are
 * only read (writeHead does not change the list it is given).
 */
export function sendAnswer(event: H3Event, answer: Answer): Promise<void> {
  const res = event.node.res;
  // Written on the next turn, as h3's send() does: the parser first sees the rest of what the
  // client sent, so a request whose body turns out malformed gets Node's single 400, never an
  // answer to its head followed by a 400. (Ended here, not with send(), which skips the body
  // once headers are sent.) Also measured faster here than writing at once (the responses of
  // many connections go out in one pass of the event loop), 32k against 24k requests/s.
  return new Promise((resolve) => {
    setImmediate(() => {
      if (!res.headersSent && !res.destroyed) {
        const { quota, fill } = answer;
        // A body to be filled in (the fast lane writes it in place) is made as bytes here, and
        // its fields follow the answer's own, as the fast lane writes them.
        const more = fill ? [...(answer.more ?? []), 'etag', fill.etag, 'content-length', String(fill.length)] : answer.more;
        const { fields } = answer.headers;
        res.writeHead(answer.status, (more || quota ? [...fields, ...(more ?? []), ...(quota ? rateLimitFields(quota) : [])] : fields) as string[]);
        res.end((fill ? fill.bytes() : answer.body) ?? undefined);
      }
      resolve();
    });
  });
}

/** A strong entity tag for exact bytes: SHA-256 in base64url, quoted. */
export function strongEtag(bytes: Uint8Array): string {
  return `"${createHash('sha256').update(bytes).digest('base64url')}"`;
}

/** Weak comparison of If-None-Match against an entity tag (RFC 9110 13.1.2). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === bare);
}
