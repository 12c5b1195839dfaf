import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidRequestError, isMvrError } from '../core/errors/errors.ts';

/**
 * A Host field value (RFC 9110 7.2): `uri-host [":" port]` of RFC 3986, so no spaces, no list and
 * no userinfo. A reg-name may be empty (HTTP/1.0 and absolute-form requests need no Host).
 */
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]*)(?::\d*)?$/;

/**
 * What the gateway refuses in a request's head before any route sees it, in the order checked:
 * more than one `Host` or a Host that is not a host (400, RFC 9112 3.2: two front ends may each
 * take a different one), and more than one `Authorization` (400: node:http keeps the first, a
 * proxy may check the other). Both are INVALID_REQUEST problem documents naming the header.
 * node:http itself already answers 400 to an HTTP/1.1 request without Host, on every Node line;
 * it serves a repeated Host or Authorization on every one (checked on 20, 22, 24 and 26).
 */
export function checkRequestHead(req: IncomingMessage): void {
  // rawHeaders keeps every field line as sent; `headers` has already merged or dropped repeats.
  const raw = req.rawHeaders;
  let hosts = 0;
  let authorizations = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      hosts++;
      if (!HOST_VALUE.test(raw[i + 1]!))
        throw new InvalidRequestError(`header "Host": "${raw[i + 1]}" is not a host with an optional port`);
    } else if (name.length === 13 && name.toLowerCase() === 'authorization') authorizations++;
  }
  if (hosts > 1) throw new InvalidRequestError(`header "Host" is sent ${hosts} times; send it once`);
  if (authorizations > 1) throw new InvalidRequestError(`header "Authorization" is sent ${authorizations} times; send one Bearer key once`);
}

/**
 * Headers on every answer the app sends, set before any route runs so that JSON, problem
 * documents, MCP answers, text and pages all carry them: `nosniff` keeps a browser from reading
 * a JSON or problem body (which may echo the request) as HTML or script.
 */
export function setEdgeHeaders(res: ServerResponse): void {
  res.setHeader('x-content-type-options', 'nosniff');
}

/**
 * Whether a request failed because its client hung up before sending all of it (mid-body of a
 * POST, say): node:http destroys the unfinished request, and reading it ends in an "aborted"
 * error (ECONNRESET). That is the client's doing and nobody is left to answer, so it is logged
 * at info, not as an error. Our own errors (a 413 that stopped reading, say) are never this.
 */
export function clientHungUp(req: IncomingMessage, error: unknown): boolean {
  if (isMvrError(error) || req.complete || !req.destroyed) return false;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE';
}
