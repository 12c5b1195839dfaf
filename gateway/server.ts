import { listen, type Listener } from 'listhen';
import type { Server } from 'node:http';
import { guardConnections } from './http/connection-guard.ts';
import type { SigningKey } from '../core/signing.ts';
import { ConfigError } from '../core/errors.ts';
import { ApiKeyStore } from './api-keys.ts';
import { createGatewayListener, errorAnswer, logRequest } from './app.ts';
import { installFastLane, type FastLane } from './http/fast-lane.ts';
import { answerVerify } from './routes/verify.ts';
import type { GatewayContext, LogLine } from './context.ts';
import { openRecordStore } from './store/record-store.ts';
import { FixedWindowLimiter } from './rate-limit.ts';

export interface GatewayOptions {
  /** The records: a folder laid out by `mvr build`, or the http(s) base URL of an origin serving one build's folder. */
  recordsDir: string;
  publicDir: string;
  apiKeysFile: string;
  issuer: string;
  schemaUrl: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Bound on verified record bytes held in memory. */
  cacheBytes: number;
  /** How often the live build, key set and API keys are re-checked. */
  refreshMs: number;
  unverifiedSigner: SigningKey | null;
  log: (line: LogLine) => void;
  /** One log line per request; default true. */
  accessLog?: boolean;
  /** Requests per minute per API key; 0 or absent turns the quota off (`mvr serve` defaults to 6000). */
  rateLimitPerMinute?: number;
  /** Requests per minute per client address without a valid key; 0 or absent turns it off (`mvr serve` defaults to 600). */
  unauthenticatedPerMinute?: number;
  /** Answer the record endpoint's common request in the fast lane (http/fast-lane.ts); default true. */
  fastLane?: boolean;
}

export interface RunningGateway {
  url: string;
  port: number;
  ctx: GatewayContext;
  /** The fast lane in front of node:http, or null (turned off, or this Node.js lacks the parser binding). */
  lane: FastLane | null;
  /** Stops accepting connections, lets in-flight requests finish, then resolves. */
  close(): Promise<void>;
}

/** How long a request head may take, a whole request may take, and an idle connection may stay (node:http, the guard and the fast lane alike). */
const HEADERS_MS = 10_000;
const REQUEST_MS = 30_000;
const KEEP_ALIVE_MS = 5_000;

/** Writes log lines as JSON to stdout. */
export const jsonLogger = (line: LogLine) => process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);

/** Builds the stores, loads them once, starts their refresh timer and serves the app with listhen. */
export async function startGateway(opts: GatewayOptions): Promise<RunningGateway> {
  const store = openRecordStore(opts.recordsDir, opts.publicDir, {
    cacheBytes: opts.cacheBytes,
    onRejected: (domain, reason) => opts.log({ level: 'error', msg: 'record rejected', domain, reason }),
  });
  const apiKeys = new ApiKeyStore(opts.apiKeysFile, opts.refreshMs);
  await Promise.all([store.refresh(), apiKeys.start()]);
  const ctx: GatewayContext = {
    issuer: opts.issuer,
    schemaUrl: opts.schemaUrl,
    store,
    apiKeys,
    unverifiedSigner: opts.unverifiedSigner,
    log: opts.log,
    accessLog: opts.accessLog ?? true,
    limits: {
      perKey: (opts.rateLimitPerMinute ?? 0) > 0 ? new FixedWindowLimiter('per-key', opts.rateLimitPerMinute!, 60) : null,
      perAddress: (opts.unauthenticatedPerMinute ?? 0) > 0 ? new FixedWindowLimiter('unauthenticated', opts.unauthenticatedPerMinute!, 60) : null,
    },
  };
  warnAboutState(ctx);
  const timer = setInterval(() => void store.refresh().catch(() => undefined), opts.refreshMs);
  timer.unref();

  let listener: Listener;
  try {
    listener = await listen(createGatewayListener(ctx), {
      hostname: opts.host,
      // An explicit port is that port or a failure, never a silent alternative.
      port: opts.port === 0 ? { random: true } : { port: opts.port, alternativePortRange: [opts.port, opts.port], verbose: false },
      showURL: false,
      isProd: true,
      open: false,
      clipboard: false,
      // listhen's autoClose exits on SIGTERM at once; closeOnSignals drains in-flight requests instead.
      autoClose: false,
      public: opts.host !== 'localhost' && opts.host !== '127.0.0.1' && opts.host !== '::1',
    });
  } catch (error) {
    clearInterval(timer);
    apiKeys.stop();
    await store.close();
    // listhen says "Unable to find an available port" (GetPortError) for a port that is taken or not allowed.
    if ((error as Error)?.name === 'GetPortError' || (error as NodeJS.ErrnoException)?.code === 'EADDRINUSE') {
      throw new ConfigError(`--port / PORT ${opts.port}: cannot listen on ${opts.host}:${opts.port} (in use by another process, or not allowed)`);
    }
    throw error;
  }
  // Slow clients: bound how long headers and bodies may take (slowloris), per connection.
  listener.server.headersTimeout = HEADERS_MS;
  listener.server.requestTimeout = REQUEST_MS;
  listener.server.keepAliveTimeout = KEEP_ALIVE_MS;
  guardConnections(listener.server as Server, { headersMs: HEADERS_MS, requestMs: REQUEST_MS, issuer: opts.issuer, log: opts.log });
  // In front of node:http (and the guard): the record endpoint's common request (http/fast-lane.ts).
  const lane =
    opts.fastLane === false
      ? null
      : installFastLane(listener.server as Server, {
          path: '/v1/verify',
          answer: (note, question) => answerVerify(note, question, ctx),
          errorAnswer: (error, note) => errorAnswer(error, ctx, note),
          logRequest: ctx.accessLog ? (method, path, status, started, note) => logRequest(ctx, method, path, status, started, note) : null,
          log: opts.log,
          keepAliveMs: KEEP_ALIVE_MS,
          headersMs: HEADERS_MS,
          requestMs: REQUEST_MS,
          issuer: opts.issuer,
        });
  if (opts.fastLane !== false && !lane) opts.log({ level: 'warn', msg: 'fast lane unavailable (this Node.js has no HTTPParser in _http_common): every request goes through node:http' });
  return {
    url: listener.url.replace(/\/$/, ''),
    port: listener.address.port,
    ctx,
    lane,
    async close() {
      clearInterval(timer);
      apiKeys.stop();
      lane?.close();
      await listener.close();
      await store.close();
    },
  };
}

function warnAboutState(ctx: GatewayContext): void {
  const records = ctx.store.source.describe();
  if (!records.ok) ctx.log({ level: 'warn', msg: 'records unavailable at start; /v1/verify answers 503 STORE_UNAVAILABLE until a build appears', error: records.error });
  const keys = ctx.store.keys.state();
  if (!keys.ok) ctx.log({ level: 'warn', msg: 'key set unavailable at start', error: keys.error });
  if (ctx.apiKeys.liveKeys === 0) ctx.log({ level: 'warn', msg: 'no live API keys: every /v1/verify request will be 401 (run "mvr apikey create --label NAME")' });
  if (ctx.unverifiedSigner) {
    const listed = keys.ok && ctx.store.keys.get().keySet.keys.some((k) => k.kid === ctx.unverifiedSigner!.kid);
    if (!listed) ctx.log({ level: 'warn', msg: 'the key that signs never-audited records is not in the published key set; clients cannot verify those answers', key_id: ctx.unverifiedSigner.kid });
  }
}

/** Closes the gateway on SIGTERM/SIGINT, letting in-flight requests finish first. */
export function closeOnSignals(gateway: RunningGateway, log: (line: LogLine) => void, onClosed: () => void = () => process.exit(0)): void {
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    log({ level: 'info', msg: 'shutting down', signal });
    gateway.close().then(onClosed, (error: Error) => {
      log({ level: 'error', msg: 'shutdown failed', error: error.message });
      process.exit(1);
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
