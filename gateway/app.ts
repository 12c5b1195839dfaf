import { createApp, defineEventHandler, type App, type H3Event } from 'h3';
import { MvrError } from '../core/errors.ts';
import { KEY_SET_PATH } from '../core/keyset.ts';
import type { GatewayContext } from './context.ts';
import { MethodNotAllowedError, NotFoundError, sendProblem } from './http/problem.ts';
import { handleHealth } from './routes/health.ts';
import { handleKeySet, handleOpenApi, handleSchema } from './routes/public.ts';
import { handleVerify } from './routes/verify.ts';
import { handleMcp } from '../mcp/http-endpoint.ts';

type Handler = (event: H3Event, ctx: GatewayContext) => Promise<void>;
interface Route {
  methods: string[];
  handler: Handler;
}

/**
 * The gateway as an h3 app, without a listener: `startGateway` serves it with listhen, and tests
 * can run it on any port. Routing is an exact path table, so every other path is a 404 problem
 * and a known path with another method a 405 with `Allow`.
 */
export function createGatewayApp(ctx: GatewayContext): App {
  const routes: Record<string, Route> = {
    '/v1/verify': { methods: ['GET', 'HEAD'], handler: handleVerify },
    [KEY_SET_PATH]: { methods: ['GET', 'HEAD'], handler: handleKeySet },
    '/schemas/verification/v1': { methods: ['GET', 'HEAD'], handler: handleSchema },
    '/openapi.json': { methods: ['GET', 'HEAD'], handler: handleOpenApi },
    '/healthz': { methods: ['GET', 'HEAD'], handler: handleHealth },
    '/mcp': { methods: ['POST'], handler: handleMcp },
  };
  const app = createApp();
  app.use(
    defineEventHandler(async (event) => {
      if (ctx.accessLog) {
        const started = performance.now();
        event.node.res.once('finish', () => logRequest(event, ctx, started));
      }
      try {
        const path = pathOf(event);
        const route = Object.hasOwn(routes, path) ? routes[path]! : null;
        if (!route) throw new NotFoundError(path);
        if (!route.methods.includes(event.method)) throw new MethodNotAllowedError(event.method, route.methods);
        await route.handler(event, ctx);
      } catch (error) {
        if (!(error instanceof MvrError)) ctx.log({ level: 'error', msg: 'unhandled error', error: String((error as Error)?.stack ?? error) });
        await sendProblem(event, error, ctx.issuer);
      }
    }),
  );
  return app;
}

/** The request's path; RFC 9112 absolute-form targets (`GET http://host/v1/verify`) included. */
function pathOf(event: H3Event): string {
  const target = event.node.req.url ?? '/';
  if (/^https?:\/\//i.test(target)) {
    try {
      return new URL(target).pathname;
    } catch {
      return target;
    }
  }
  return target.split('?', 1)[0]!;
}

/** One JSON line per request: method, path, status, duration, key id; never the key, never the query's other members. */
function logRequest(event: H3Event, ctx: GatewayContext, started: number): void {
  const line: Record<string, unknown> = {
    level: 'info',
    msg: 'request',
    method: event.method,
    path: pathOf(event),
    status: event.node.res.statusCode,
    duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    key_id: event.context.keyId ?? null,
  };
  if (event.context.domain) line.domain = event.context.domain;
  if (event.context.errorCode) line.code = event.context.errorCode;
  ctx.log(line as { level: 'info'; msg: string });
}
