import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../core/errors/errors.ts';
import { ANSWER_LIMITS } from '../core/limits.ts';
import { keyConfigSha256 } from '../core/ohttp.ts';
import { createGatewayApp, gatewayListener } from './app.ts';
import type { ConnectionTimeouts, GatewayOptions, GatewayServices } from './context.ts';
import type { JsonLog } from './json-log.ts';
import { type MetricsListener, serveMetrics } from './metrics-server.ts';

export type { GatewayOptions };

import { openGatewayServices } from './services.ts';

export interface RunningGateway {
  url: string;
  port: number;
  services: GatewayServices;
  /** `http://host:port/metrics` when this process serves the metrics; else null. */
  metricsUrl: string | null;
  /** The node:http server: who connects to it (a test tells a relay's address from a caller's). */
  server: Server;
  /** Stops accepting connections, lets in-flight requests finish, then resolves. */
  close(): Promise<void>;
}

/**
 * Slow clients: the head of a request must arrive within `headersMs` and the whole request within
 * `requestMs`, checked by node:http every CHECK_MS (node:http answers 408 and closes); an idle
 * keep-alive connection is closed after `keepAliveMs`; a client that has not taken a write within
 * `writeIdleMs` is cut (gateway/streams.ts). node:http also answers what it cannot
 * parse (400, 431) itself, only while no response is in flight.
 */
export const DEFAULT_CONNECTION_TIMEOUTS: Readonly<ConnectionTimeouts> = Object.freeze({
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  writeIdleMs: ANSWER_LIMITS.writeIdleMs,
});
const CHECK_MS = 250;

/** The connection timeouts with their defaults, checked once: whole milliseconds, the head no later than the request. */
export function connectionTimeouts(given: Partial<ConnectionTimeouts> = {}): ConnectionTimeouts {
  const t = { ...DEFAULT_CONNECTION_TIMEOUTS, ...given };
  for (const [name, ms] of Object.entries(t)) {
    if (!Number.isSafeInteger(ms) || ms < 1)
      throw new ConfigError(`connectionTimeouts.${name}: must be a whole number of milliseconds >= 1, got ${String(ms)}`);
  }
  if (t.headersMs > t.requestMs)
    throw new ConfigError(`connectionTimeouts.headersMs (${t.headersMs}) must not exceed requestMs (${t.requestMs})`);
  return t;
}

/** Opens the services once (their refresh loops with them) and serves the gateway app with node:http. */
export async function startGateway(opts: GatewayOptions): Promise<RunningGateway> {
  const timeouts = connectionTimeouts(opts.connectionTimeouts);
  const { services, close: closeServices } = await openGatewayServices(opts, timeouts.writeIdleMs);
  warnAboutState(services);

  const listener = gatewayListener(createGatewayApp(services));
  // Once closing, every answer says `Connection: close` and its connection ends after it: a
  // client that keeps a connection busy (a load balancer's pool) would otherwise keep the
  // gateway from ever finishing its shutdown. That holds for the answers in flight when closing
  // begins too: kept alive, each one's connection would sit idle until the client or
  // `keepAliveMs` ended it, and the shutdown with it.
  // The answers in flight are found through their connections (`writes.answersInFlight`), not
  // kept in a set of their own: a set that takes and gives back an entry per request rebuilds its
  // table every few dozen requests, and each table went to the old generation (about 58 bytes a
  // request at 64 connections, docs/benchmarks.md, "What a hot record promotes").
  let closing = false;
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      connectionsCheckingInterval: Math.min(CHECK_MS, timeouts.headersMs),
    },
    (req, res) => {
      services.writes.answering(res);
      if (closing) res.setHeader('connection', 'close');
      listener(req, res);
    },
  );
  services.writes.guard(server);
  let metrics: MetricsListener | null = null;
  try {
    await listen(server, opts.host, opts.port);
    const m = services.metrics;
    if (m && opts.metrics && 'listen' in opts.metrics)
      metrics = await serveMetrics(() => m.text(), opts.metrics.listen.host, opts.metrics.listen.port, services.log);
    if (m && opts.metrics && 'toClusterPrimary' in opts.metrics) m.reportToClusterPrimary();
  } catch (error) {
    if (server.listening) server.close();
    await closeServices();
    if ((error as NodeJS.ErrnoException)?.code === 'EADDRINUSE' || (error as NodeJS.ErrnoException)?.code === 'EACCES') {
      throw new ConfigError(
        `--port / PORT ${opts.port}: cannot listen on ${opts.host}:${opts.port} (in use by another process, or not allowed)`,
      );
    }
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}`,
    port,
    services,
    metricsUrl: metrics?.url ?? null,
    server,
    async close() {
      closing = true;
      for (const res of services.writes.answersInFlight()) if (!res.headersSent) res.setHeader('connection', 'close');
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await metrics?.close();
      await closeServices();
    },
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function warnAboutState(services: GatewayServices): void {
  const health = services.records.health();
  if (!health.records.ok)
    services.log({
      level: 'warn',
      msg: 'records unavailable at start; /v1/verify answers 503 STORE_UNAVAILABLE until a build appears',
      error: health.records.error,
    });
  if (!health.keySet.ok) services.log({ level: 'warn', msg: 'key set unavailable at start' });
  if (services.apiKeys.liveKeys === 0)
    services.log({ level: 'warn', msg: 'no live API keys: every /v1/verify request will be 401 (run "mvr apikey create --label NAME")' });
  if (services.ohttpKey) void warnAboutOhttpKey(services, services.ohttpKey.configBytes);
}

/** An Oblivious HTTP key the live build did not sign: clients through a relay refuse every answer, so the operator is told at start. */
async function warnAboutOhttpKey(services: GatewayServices, configBytes: Buffer): Promise<void> {
  const live = await services.records.buildMap().catch(() => null);
  if (!live) return;
  const signed = (live.statement as { ohttp?: { key_config_sha256?: unknown } }).ohttp?.key_config_sha256;
  const own = keyConfigSha256(configBytes);
  if (signed !== own)
    services.log({
      level: 'warn',
      msg: 'the Oblivious HTTP key is not the one the live build signed: clients through a relay refuse its answers until a build signs it',
      build: live.build,
      key_config_sha256: own,
      signed: typeof signed === 'string' ? signed : null,
    });
}

/**
 * Closes the gateway on SIGTERM/SIGINT: in-flight requests finish first, then every log line
 * (their access lines included) is written out, then the process exits.
 */
export function closeOnSignals(gateway: RunningGateway, log: JsonLog, onClosed: () => void = () => process.exit(0)): void {
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    log.log({ level: 'info', msg: 'shutting down', signal });
    gateway
      .close()
      .then(() => log.close())
      .then(onClosed, (error: Error) => {
        log.log({ level: 'error', msg: 'shutdown failed', error: error.message });
        void log.close().finally(() => process.exit(1));
      });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
