import type { IncomingMessage, ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { H3Event } from 'h3';

/** A whole HTTP answer: status, headers and body (null for none, as in a 304). */
export interface Answer {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: Buffer | string | null;
}

/**
 * Writes an answer and ends it, in the same turn: h3's `send` ends it on the next turn
 * (setImmediate), a timer and a promise per request. Content-Length is always set from the body,
 * so a HEAD answer carries the length of the GET body (Node leaves the body itself out of a HEAD
 * response). h3 takes the ended response as answered.
 */
export function sendAnswer(event: H3Event, answer: Answer): void | Promise<void> {
  // A request whose body is still arriving (a refusal made from its head: 401, 429) is answered on
  // the next turn, as h3 would: the rest of its bytes are parsed first, and a body the parser
  // refuses then gets the parser's 400 alone, never a second response to the same request. The
  // promise tells h3 the answer is on its way.
  if (bodyStillArriving(event.node.req)) return nextTurn().then(() => writeAnswer(event.node.res, answer));
  writeAnswer(event.node.res, answer);
}

function writeAnswer(res: ServerResponse, answer: Answer): void {
  if (res.destroyed) return;
  const body = typeof answer.body === 'string' ? Buffer.from(answer.body) : answer.body;
  res.statusCode = answer.status;
  // A plain loop: h3's setResponseHeaders makes an entries array per answer, on every request.
  for (const name in answer.headers) res.setHeader(name, answer.headers[name]!);
  if (body) res.setHeader('content-length', body.length);
  res.end(body);
}

/** A request with a body (chunked, or a Content-Length above 0) that the parser has not read to its end yet. */
function bodyStillArriving(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Weak comparison of If-None-Match against an entity tag (RFC 9110 13.1.2). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === bare);
}

/** The two answers an entity with a tag can get: 200 with it, or 304 when the request's If-None-Match names the tag. */
export interface ConditionalAnswers {
  etag: string;
  ok: Answer;
  notModified: Answer;
}

/** Both answers of an entity, made once (a record's are made once per record, not per request). */
export function conditionalAnswers(headers: Readonly<Record<string, string>>, etag: string, body: Buffer): ConditionalAnswers {
  // Object.assign, not a spread with a member added: on Node 20 that spread of these headers took
  // about 4 us (a slow path of V8's object cloning).
  const all: Readonly<Record<string, string>> = Object.freeze(Object.assign({}, headers, { etag }));
  return { etag, ok: { status: 200, headers: all, body }, notModified: { status: 304, headers: all, body: null } };
}

/** Which of an entity's answers a request gets. */
export function pickConditional(event: H3Event, answers: ConditionalAnswers): Answer {
  return matchesIfNoneMatch(event.node.req.headers['if-none-match'], answers.etag) ? answers.notModified : answers.ok;
}

/** A 200 with `headers` and `body`, or a 304 when the request's If-None-Match names `etag`. */
export function conditionalAnswer(event: H3Event, headers: Readonly<Record<string, string>>, etag: string, body: Buffer): Answer {
  return pickConditional(event, conditionalAnswers(headers, etag, body));
}
