import type { ServerResponse } from 'node:http';
import type { H3Event } from 'h3';
import type { AccessLine, GatewayServices } from './context.ts';
import { pathOf } from './query.ts';

/**
 * What every answered request leaves behind, from the app's one request hook: its access log line
 * and its metrics, taken when the answer's last byte is handed to the kernel. Null when both are
 * off, so a request then pays for neither.
 */
export function requestObserver(services: GatewayServices): ((event: H3Event) => void) | null {
  const { metrics } = services;
  const logRequest = services.accessLog ? services.logRequest : null;
  if (!logRequest && !metrics) return null;
  return (event) => {
    const started = performance.now();
    // `on`, not `once`: 'finish' comes once, and once() wraps the listener in another function per request.
    event.node.res.on('finish', function (this: ServerResponse) {
      const ms = performance.now() - started;
      const note = event.context;
      if (logRequest) logRequest(accessLine(event.method, pathOf(event), this.statusCode, ms, note));
      metrics?.request(note.route ?? 'unmatched', event.method, this.statusCode, note.errorCode, ms / 1000);
    });
  };
}

/**
 * One request's access line: method, path (without the query), status, duration, key id, the
 * normalized domain, the error code and a server failure's request id when there are. Never the key, never the query's other
 * members: only what the routes noted on purpose is written.
 */
function accessLine(method: string, path: string, status: number, ms: number, note: H3Event['context']): AccessLine {
  return {
    method,
    path,
    status,
    durationMs: Math.round(ms * 1000) / 1000,
    keyId: note.keyId ?? null,
    domain: note.domain || undefined,
    code: note.errorCode || undefined,
    requestId: note.requestId,
  };
}
