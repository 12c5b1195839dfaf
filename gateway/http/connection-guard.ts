import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { LogLine } from '../context.ts';
import { problemType } from './problem.ts';

/**
 * Guards for what happens before a request reaches the app.
 *
 * Slow clients: Node enforces `headersTimeout` and `requestTimeout` only when a check runs every
 * `connectionsCheckingInterval` (30 s, fixed when the server is created, and listhen creates it),
 * so a slowloris client could hold a connection for up to a minute. Here each connection gets
 * its own timer: the head of each request must arrive within `headersMs`, and a request must be
 * answered within `requestMs`, or the socket is closed.
 *
 * Parser errors (400, 431) stay Node's own: it answers only when no response is in flight and
 * destroys the socket at once, so a second response can never follow a first one.
 */
export function guardConnections(server: Server, opts: { headersMs: number; requestMs: number; issuer: string; log: (line: LogLine) => void }): void {
  const timers = new WeakMap<Socket, NodeJS.Timeout>();
  const problem = (status: number, code: string, detail: string) => {
    const body = JSON.stringify({ type: problemType(opts.issuer, code), title: STATUS_CODES[status], status, detail, code });
    return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };
  // Waiting for a request head: nothing has been answered on the socket yet, so a 408 can be written.
  const awaitHead = (socket: Socket) => {
    clearTimeout(timers.get(socket));
    const timer = setTimeout(() => {
      opts.log({ level: 'warn', msg: 'client error', status: 408, code: 'REQUEST_TIMEOUT' });
      if (socket.writable) socket.end(problem(408, 'REQUEST_TIMEOUT', `the request head did not arrive within ${opts.headersMs / 1000} s`));
      setTimeout(() => socket.destroy(), 1000).unref();
    }, opts.headersMs);
    timer.unref();
    timers.set(socket, timer);
  };
  // A request in progress that takes too long (a body trickling in): the answer may have begun, so just close.
  const awaitAnswer = (socket: Socket) => {
    clearTimeout(timers.get(socket));
    const timer = setTimeout(() => socket.destroy(), opts.requestMs);
    timer.unref();
    timers.set(socket, timer);
  };
  server.on('connection', (socket: Socket) => {
    awaitHead(socket);
    socket.once('close', () => clearTimeout(timers.get(socket)));
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    awaitAnswer(socket);
    // Keep-alive: the next request's head must arrive as promptly as the first one's.
    res.once('finish', () => {
      if (!socket.destroyed) awaitHead(socket);
    });
  });
}
