import type { IncomingMessage, ServerResponse } from 'node:http';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import {
  type App,
  createApp,
  createRouter,
  defineEventHandler,
  type EventHandler,
  type H3Event,
  lazyEventHandler,
  toNodeListener,
  toPlainHandler,
} from 'h3';
import { isMvrError, MethodNotAllowedError, NotFoundError } from '../core/errors/errors.ts';
import { httpCodeOf } from '../core/errors/problem-document.ts';
import { LOG_VKEY_PATH } from '../core/layout.ts';
import { OHTTP_GATEWAY_PATH } from '../core/ohttp.ts';
import { sendAnswer } from './answer.ts';
import type { GatewayServices } from './context.ts';
import { checkRequestHead, clientHungUp, setEdgeHeaders } from './edge.ts';
import { requestObserver } from './observe.ts';
import { noteWithheld, problemAnswer } from './problem.ts';
import { pathOf } from './query.ts';
import { absenceRoute } from './routes/absence.ts';
import { batchRoute } from './routes/batch.ts';
import { bundleRoute } from './routes/bundle.ts';
import { healthRoute } from './routes/health.ts';
import { buildsRoute, changesRoute, historyRoute } from './routes/history.ts';
import { LOG_PREFIX, logFilesRoute, logVkeyRoute, proofRoute } from './routes/log.ts';
import { LOOKUP_PREFIX, lookupHeadRoute, lookupRoute } from './routes/lookup.ts';
import { MIRROR_BUILDS_PREFIX, mirrorFileRoute, mirrorRoute } from './routes/mirror.ts';
import { type InnerHandler, ohttpGatewayRoute, ohttpKeysRoute } from './routes/ohttp.ts';
import { bundleSchemaRoute, keySetRoute, openApiRoute, schemaRoute } from './routes/public.ts';
import { verifyRoute } from './routes/verify.ts';
import { verifyPageRoutes } from './routes/verify-page.ts';

type Method = 'GET' | 'HEAD' | 'POST';

/**
 * Every route of the gateway: path, methods, handler. A known path asked with another method is
 * 405 with `Allow`. `inner` answers the requests opened from Oblivious HTTP: the app itself.
 */
export function routes(services: GatewayServices, inner: InnerHandler): { path: string; methods: Method[]; handler: EventHandler }[] {
  const verifyPage = verifyPageRoutes();
  const ohttpKeys = ohttpKeysRoute(services);
  const ohttpGateway = ohttpGatewayRoute(services, inner);
  return [
    { path: '/v1/verify', methods: ['GET', 'HEAD'], handler: verifyRoute(services) },
    { path: '/v1/verify/batch', methods: ['POST'], handler: batchRoute(services) },
    { path: '/v1/builds', methods: ['GET', 'HEAD'], handler: buildsRoute(services) },
    { path: '/v1/history', methods: ['GET', 'HEAD'], handler: historyRoute(services) },
    { path: '/v1/changes', methods: ['GET', 'HEAD'], handler: changesRoute(services) },
    { path: '/v1/proof', methods: ['GET', 'HEAD'], handler: proofRoute(services) },
    { path: '/v1/absence', methods: ['GET', 'HEAD'], handler: absenceRoute(services) },
    { path: '/v1/bundle', methods: ['GET', 'HEAD'], handler: bundleRoute(services) },
    { path: '/v1/lookup', methods: ['GET', 'HEAD'], handler: lookupHeadRoute(services) },
    { path: `${LOOKUP_PREFIX}**`, methods: ['GET', 'HEAD'], handler: lookupRoute(services) },
    { path: '/v1/mirror', methods: ['GET', 'HEAD'], handler: mirrorRoute(services) },
    { path: `${MIRROR_BUILDS_PREFIX}**`, methods: ['GET', 'HEAD'], handler: mirrorFileRoute(services) },
    { path: KEY_SET_PATH, methods: ['GET', 'HEAD'], handler: keySetRoute(services) },
    { path: LOG_VKEY_PATH, methods: ['GET', 'HEAD'], handler: logVkeyRoute(services) },
    // The key configuration, and the Oblivious Gateway Resource at the same place (RFC 9540 section 3).
    {
      path: OHTTP_GATEWAY_PATH,
      methods: ['GET', 'HEAD', 'POST'],
      handler: defineEventHandler((event) => (event.method === 'POST' ? ohttpGateway(event) : ohttpKeys(event))),
    },
    // Every path under /log/ (the tile paths are checked by the handler).
    { path: `${LOG_PREFIX}**`, methods: ['GET', 'HEAD'], handler: logFilesRoute(services) },
    { path: '/schemas/verification/v1', methods: ['GET', 'HEAD'], handler: schemaRoute(services) },
    { path: '/schemas/bundle/v1', methods: ['GET', 'HEAD'], handler: bundleSchemaRoute(services) },
    { path: '/openapi.json', methods: ['GET', 'HEAD'], handler: openApiRoute(services) },
    { path: '/healthz', methods: ['GET', 'HEAD'], handler: healthRoute(services) },
    { path: '/verify', methods: ['GET', 'HEAD'], handler: verifyPage.page },
    { path: '/verify/app.js', methods: ['GET', 'HEAD'], handler: verifyPage.script },
    // The MCP SDK is loaded at the first MCP request, not at every gateway's start.
    { path: '/mcp', methods: ['POST'], handler: lazyEventHandler(() => import('./routes/mcp.ts').then((m) => m.mcpRoute(services))) },
  ];
}

/**
 * The gateway as an h3 app, without a port: every request goes through h3's router; the
 * gateway's own errors (typed, with a code) are answered as problem documents by the route that
 * met them, an unknown path is a 404, and anything else a handler throws reaches `onError`.
 * {@link startGateway} serves it; tests may serve it on any port.
 */
export function createGatewayApp(services: GatewayServices): App {
  const observe = requestObserver(services);
  const app = createApp({
    // Before any route: the access log and metrics set to take the answer, the headers every
    // answer carries, then the request head's own checks (400). In the app's one request hook
    // rather than a layer of its own, which cost each request another turn through h3's stack.
    onRequest: (event) => {
      observe?.(event);
      setEdgeHeaders(event.node.res);
      checkRequestHead(event.node.req);
    },
    // h3 wraps what a handler threw; the error itself is its cause.
    onError: (error, event) => answerError(event, error.cause ?? error, services),
  });
  const router = createRouter();
  // Requests opened from Oblivious HTTP go through this same app, in memory.
  const inner = toPlainHandler(app);
  for (const route of routes(services, inner)) {
    router.add(
      route.path,
      defineEventHandler((event) => {
        try {
          // Exact paths only: the router alone would also take `/v1/verify/` and percent-encoded spellings.
          const path = pathOf(event);
          const matches = route.path.endsWith('/**') ? path.startsWith(route.path.slice(0, -2)) : path === route.path;
          if (!matches) throw new NotFoundError(path);
          event.context.route = route.path;
          if (!route.methods.includes(event.method as Method)) throw new MethodNotAllowedError(event.method, route.methods);
          // Not awaited: a route that answers in the same turn (a record in memory) is not made to wait one.
          const answered = route.handler(event);
          if (answered instanceof Promise) return answered.catch((error: unknown) => answerRouteError(event, error, services));
          return answered;
        } catch (error) {
          return answerRouteError(event, error, services);
        }
      }),
    );
  }
  app.use(router);
  app.use(defineEventHandler((event) => answerError(event, new NotFoundError(pathOf(event)), services)));
  return app;
}

/**
 * What a route met: the gateway's own errors answered there rather than thrown on through h3's
 * error path (a wrapped error, and onError), so a refusal (401, 429, 400) costs about what an
 * answer does; anything else goes on to onError.
 */
function answerRouteError(event: H3Event, error: unknown, services: GatewayServices): Promise<void> | void {
  if (!isMvrError(error)) throw error;
  return answerError(event, error, services);
}

/**
 * Answers an error with its problem document (an unexpected one as INTERNAL), noting its code
 * for the access log and metrics; a server failure's cause is logged, not answered (noteWithheld). An answer already under way cannot
 * change its status: the connection is cut instead, so the client sees a failure, not a truncated success.
 */
function answerError(event: H3Event, error: unknown, services: GatewayServices): Promise<void> | void {
  if (clientHungUp(event.node.req, error)) {
    services.log({
      level: 'info',
      msg: 'client closed the connection before the request was complete',
      method: event.method,
      path: pathOf(event),
    });
    // Ended, so h3 takes it as answered (and prints nothing); the socket is gone, nothing is sent.
    event.node.res.end();
    return;
  }
  const requestId = noteWithheld(event, services, error);
  event.context.errorCode = httpCodeOf(error);
  if (event.node.res.headersSent) {
    event.node.res.destroy();
    return;
  }
  return sendAnswer(event, problemAnswer(error, services.issuer, requestId));
}

/**
 * The app as a node:http listener. A request target in absolute form (`GET http://host/v1/verify`,
 * RFC 9112 3.2.2) is reduced to its origin form first, so it reaches the same route.
 */
export function gatewayListener(app: App): (req: IncomingMessage, res: ServerResponse) => void {
  const listener = toNodeListener(app);
  return (req, res) => {
    // Most targets are in origin form (a leading "/"): the pattern is tried only on the others.
    const authority = req.url?.startsWith('/') ? null : /^https?:\/\/[^/?#]*/i.exec(req.url ?? '');
    if (authority) req.url = req.url!.slice(authority[0].length).replace(/^(?!\/)/, '/');
    void listener(req, res);
  };
}
