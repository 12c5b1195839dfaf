import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { LogLine } from '../context.ts';
import { problemType } from './problem.ts';

/** Set on a socket handed over by the fast lane: when the lane began waiting for the head, so the head's deadline counts from then. */
export const WAITING_SINCE = Symbol('mvr.waitingSince');

/**
 * A request head that did not arrive (or finish) in time, with nothing answered on the socket
 * yet: logged, answered with a 408 problem document, and the connection closed (shared by the
 * guard and the fast lane).
 */
export function closeForHeadTimeout(socket: Socket, opts: { issuer: string; headersMs: number; log: (line: LogLine) => void }): void {
  opts.log({ level: 'warn', msg: 'client error', status: 408, code: 'REQUEST_TIMEOUT' });
  if (socket.writable) socket.end(rawProblem(opts.issuer, 408, 'REQUEST_TIMEOUT', `the request head did not arrive within ${opts.headersMs / 1000} s`));
  setTimeout(() => socket.destroy(), 1000).unref();
}

function rawProblem(issuer: string, status: number, code: string, detail: string): string {
  const body = JSON.stringify({ type: problemType(issuer, code), title: STATUS_CODES[status], status, detail, code });
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/**
 * Guards for what happens before a request reaches the app.
 *
 * Slow clients: Node enforces `headersTimeout` and `requestTimeout` only when a check runs every
 * `connectionsCheckingInterval` (30 s, fixed when the server is created, and listhen creates it),
 * so a slowloris client could hold a connection for up to a minute. Here each connection gets
 * its own deadline, checked four times a second: the head of each request must arrive within
 * `headersMs`, and a request must be answered within `requestMs`, or the socket is closed.
 *
 * Parser errors (400, 431) stay Node's own: it answers only when no response is in flight and
 * destroys the socket at once, so a second response can never follow a first one.
 */
export function guardConnections(server: Server, opts: { headersMs: number; requestMs: number; issuer: string; log: (line: LogLine) => void; sweepMs?: number }): void {
  // One deadline per open connection, checked by one sweep rather than a timer per request:
  // re-arming timers on every request was a visible share of a hot request's time. A deadline
  // fires up to one sweep late (a quarter second by default).
  const sweepMs = opts.sweepMs ?? 250;
  const open = new Map<Socket, { deadline: number; awaiting: 'head' | 'answer'; res: ServerResponse | null }>();
  let clock = Date.now();
  const sweep = setInterval(() => {
    clock = Date.now();
    for (const [socket, state] of open) {
      // Keep-alive: once an answer is out, the next request's head must arrive as promptly as the
      // first one's (read here, rather than from a 'finish' listener on every response).
      if (state.awaiting === 'answer' && state.res?.writableFinished) {
        state.awaiting = 'head';
        state.res = null;
        state.deadline = clock + opts.headersMs;
      }
      if (clock < state.deadline) continue;
      open.delete(socket);
      if (state.awaiting === 'answer') {
        // A request in progress that takes too long (a body trickling in): the answer may have begun, so just close.
        socket.destroy();
        continue;
      }
      // Waiting for a request head: nothing has been answered on the socket yet, so a 408 can be written.
      closeForHeadTimeout(socket, opts);
    }
  }, sweepMs);
  sweep.unref();
  server.once('close', () => clearInterval(sweep));
  server.on('connection', (socket: Socket) => {
    // A socket handed over by the fast lane has been waiting for this head since it says.
    const since = (socket as Socket & { [WAITING_SINCE]?: number })[WAITING_SINCE] ?? Date.now();
    open.set(socket, { deadline: since + opts.headersMs, awaiting: 'head', res: null });
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = open.get(req.socket);
    if (!state) return;
    state.awaiting = 'answer';
    state.res = res;
    state.deadline = clock + opts.requestMs;
  });
}
