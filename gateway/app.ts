import { createEvent, type H3Event } from 'h3';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MvrError } from '../core/errors.ts';
import { KEY_SET_PATH } from '../core/keyset.ts';
import type { Answer, GatewayContext, RequestNote } from './context.ts';
import { MethodNotAllowedError, NotFoundError, problemAnswer } from './http/problem.ts';
import { sendAnswer } from './http/reply.ts';
import { handleHealth } from './routes/health.ts';
import { handleKeySet, handleOpenApi, handleSchema } from './routes/public.ts';
import { handleVerify } from './routes/verify.ts';
import { handleMcp } from '../mcp/http-endpoint.ts';

type Handler = (event: H3Event, ctx: GatewayContext) => Promise<void>;
interface Route {
  methods: string[];
  handler: Handler;
}

/** The gateway's routes: an exact path table. */
const ROUTES: Record<string, Route> = {
  '/v1/verify': { methods: ['GET', 'HEAD'], handler: handleVerify },
  [KEY_SET_PATH]: { methods: ['GET', 'HEAD'], handler: handleKeySet },
  '/schemas/verification/v1': { methods: ['GET', 'HEAD'], handler: handleSchema },
  '/openapi.json': { methods: ['GET', 'HEAD'], handler: handleOpenApi },
  '/healthz': { methods: ['GET', 'HEAD'], handler: handleHealth },
  '/mcp': { methods: ['POST'], handler: handleMcp },
};

/**
 * The gateway's node:http listener, served by listhen (`startGateway`; tests run it on any port):
 * each request becomes an h3 event handed straight to one handler that routes by an exact path
 * table, so every other path is a 404 problem and a known path with another method a 405 with
 * `Allow`. h3's App layer stack is not used: with a single handler that answers every path it
 * would only add a pass per request (measured: about 6% of a hot request's throughput).
 */
export function createGatewayListener(ctx: GatewayContext): (req: IncomingMessage, res: ServerResponse) => void {
  const handle = gatewayHandler(ctx);
  return (req, res) => void handle(createEvent(req, res));
}

/** One request: access log, route, answer; every error becomes a problem document here. */
function gatewayHandler(ctx: GatewayContext): (event: H3Event) => Promise<void> {
  return async (event) => {
    if (ctx.accessLog) {
      const started = performance.now();
      event.node.res.once('finish', () => logRequest(ctx, event.method, pathOf(event.node.req.url ?? '/'), event.node.res.statusCode, started, event.context));
    }
    try {
      const path = pathOf(event.node.req.url ?? '/');
      const route = Object.hasOwn(ROUTES, path) ? ROUTES[path]! : null;
      if (!route) throw new NotFoundError(path);
      if (!route.methods.includes(event.method)) throw new MethodNotAllowedError(event.method, route.methods);
      await route.handler(event, ctx);
    } catch (error) {
      // Nothing is left to answer with if even that fails: close the connection rather than leave it hanging.
      await sendAnswer(event, errorAnswer(error, ctx, event.context)).catch(() => event.node.res.destroy());
    }
  };
}

/** The problem answer for an error a handler threw; one that is not the gateway's own is logged (and answered as INTERNAL). */
export function errorAnswer(error: unknown, ctx: GatewayContext, note: RequestNote): Answer {
  if (!(error instanceof MvrError)) ctx.log({ level: 'error', msg: 'unhandled error', error: String((error as Error)?.stack ?? error) });
  return problemAnswer(error, ctx.issuer, note);
}

/**
 * The path of a request target, as sent: RFC 9112 absolute-form targets (`GET
 * http://host/v1/verify`) lose their scheme and authority only. Dot segments are resolved in
 * neither form (WHATWG URL resolved them in the absolute form alone, so `/x/../mcp` reached
 * `/mcp` one way and was a 404 the other; found by the HTTP fuzz suite).
 */
export function pathOf(target: string): string {
  const authority = /^https?:\/\/[^/?#]*/i.exec(target);
  const path = (authority ? target.slice(authority[0].length) : target).split('?', 1)[0]!;
  return authority && path === '' ? '/' : path;
}

/** One JSON line per request: method, path, status, duration, key id; never the key, never the query's other members. */
export function logRequest(ctx: GatewayContext, method: string, path: string, status: number, started: number, note: RequestNote): void {
  const line: Record<string, unknown> = {
    level: 'info',
    msg: 'request',
    method,
    path,
    status,
    duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    key_id: note.keyId ?? null,
  };
  if (note.domain) line.domain = note.domain;
  if (note.errorCode) line.code = note.errorCode;
  ctx.log(line as { level: 'info'; msg: string });
}
