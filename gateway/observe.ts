import type { H3Event } from 'h3';
import type { GatewayServices } from './context.ts';
import { pathOf } from './query.ts';

/**
 * What every answered request leaves behind, from the app's one request hook: its access log line
 * and its metrics, taken when the answer's last byte is handed to the kernel. Null when both are
 * off, so a request then pays for neither.
 */
export function requestObserver(services: GatewayServices): ((event: H3Event) => void) | null {
  const { accessLog, metrics } = services;
  if (!accessLog && !metrics) return null;
  return (event) => {
    const started = performance.now();
    const res = event.node.res;
    res.once('finish', () => {
      const ms = performance.now() - started;
      const note = event.context;
      if (accessLog) logRequest(services, event.method, pathOf(event), res.statusCode, ms, note);
      metrics?.request(note.route ?? 'unmatched', event.method, res.statusCode, note.errorCode, ms / 1000);
    });
  };
}

/**
 * One JSON line per request: method, path (without the query), status, duration, key id, the
 * normalized domain and the error code when there are. Never the key, never the query's other
 * members: only what the routes noted on purpose is written.
 */
function logRequest(services: GatewayServices, method: string, path: string, status: number, ms: number, note: H3Event['context']): void {
  const line: Record<string, unknown> = {
    level: 'info',
    msg: 'request',
    method,
    path,
    status,
    duration_ms: Math.round(ms * 1000) / 1000,
    key_id: note.keyId ?? null,
  };
  if (note.domain) line.domain = note.domain;
  if (note.errorCode) line.code = note.errorCode;
  services.log(line as { level: 'info'; msg: string });
}
