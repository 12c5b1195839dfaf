import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../core/errors/errors.ts';
import type { LogLine } from './context.ts';

/** The Prometheus text exposition format, as prom-client writes it. */
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface MetricsListener {
  /** `http://host:port/metrics`. */
  url: string;
  close(): Promise<void>;
}

/**
 * `GET /metrics` on a listener of its own (`--metrics-port`, `--metrics-host`), apart from the
 * gateway's: the metrics stay on a private interface (127.0.0.1 by default) while the gateway
 * faces the load balancer, and a scrape never queues behind the gateway's traffic or its
 * quotas. It answers nothing else, so it is plain node:http rather than the gateway's app.
 */
export async function serveMetrics(
  text: () => Promise<string>,
  host: string,
  port: number,
  log: (line: LogLine) => void,
): Promise<MetricsListener> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') return answer(404, 'not found: metrics are at /metrics\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, 'use GET\n', { allow: 'GET, HEAD' });
    text().then(
      (body) => answer(200, body, { 'content-type': CONTENT_TYPE }),
      (error: Error) => {
        log({ level: 'error', msg: 'metrics not collected', error: error.message });
        answer(503, 'metrics could not be collected; see the log\n');
      },
    );

    function answer(status: number, body: string, headers: Record<string, string> = {}): void {
      res.writeHead(status, {
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-store',
        'content-length': Buffer.byteLength(body),
        ...headers,
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE' || error.code === 'EACCES'
          ? new ConfigError(
              `--metrics-port / MVR_METRICS_PORT ${port}: cannot listen on ${host}:${port} (in use by another process, or not allowed)`,
            )
          : error,
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
