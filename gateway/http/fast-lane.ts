import { maxHeaderSize as nodeMaxHeaderSize, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { AnswerBytes } from './answer-bytes.ts';
import { Lane, type LaneHub, type LaneOptions } from './lane.ts';
import { parserBinding } from './lane-parser.ts';

export type { LaneOptions } from './lane.ts';

/**
 * The fast lane: the record endpoint's common request answered without node:http's request and
 * response objects.
 *
 * Node's HTTP server spends most of a small request's time in JavaScript around the parser
 * (IncomingMessage, ServerResponse, their streams and events); measured here, a bare node:http
 * server answering fixed bytes reaches 0.62x-0.70x of nginx, and the same answer written by
 * Node's own parser (llhttp, the `HTTPParser` binding node:http uses) on a plain socket about
 * 1.1x. So the gateway takes every connection first, here, and answers in this lane exactly one
 * kind of request: a `GET` or `HEAD` of `/v1/verify`, HTTP/1.1, keep-alive, without a body,
 * `Expect`, `Upgrade` or `Transfer-Encoding`, with one `Host` and at most one `Authorization`
 * and `If-None-Match`. The head is parsed by llhttp with node:http's own settings (strict,
 * 16 KiB), so what the lane accepts is exactly what node:http would accept, and the answer is
 * computed by the same function node:http's route calls ({@link LaneOptions.answer}).
 *
 * Anything else, at any point of a connection (another path or method, a parse error, a head
 * over 16 KiB, HTTP/1.0, `Connection: close`, a body), hands the connection over to node:http
 * for good: the bytes not yet answered are put back in front of the socket's stream and the
 * server's own connection listeners run, as if it had just connected. Every rule of node:http
 * (400 and 431 from the parser, 100-continue, 417) and of the gateway's other routes therefore
 * applies unchanged. A head that arrives in pieces waits in the lane for the rest, checked by
 * the parser as it grows (a wrong start is handed over at once); one that does not finish within
 * the head deadline gets the connection guard's 408, as does a connection that sends nothing.
 * Requests are answered one at a time, in order: while one waits for a file, and while a
 * client that pipelines does not read its answers, reading stops.
 *
 * Needs the `HTTPParser` of `_http_common` (http/lane-parser.ts); without it the lane is not
 * installed and node:http serves everything.
 */
export interface FastLane {
  /** Stops taking requests: idle connections are closed now, busy ones after their answer. */
  close(): void;
  /** Requests answered in the lane and connections handed to node:http (for tests). */
  readonly counts: { answered: number; handedOver: number };
}

/**
 * Puts the lane in front of `server`: the server's 'connection' listeners (node:http's own, and
 * any added before, such as the connection guard) are taken off and run only for connections
 * handed over. Returns null when the parser binding is missing.
 */
export function installFastLane(server: Server, opts: LaneOptions): FastLane | null {
  if (!parserBinding) return null;
  const behind = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const open = new Set<Lane>();

  // One deadline per connection, checked by one sweep (as the connection guard does).
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const lane of open) if (now >= lane.deadline) lane.expire();
  }, opts.sweepMs ?? 250);
  sweep.unref();
  server.once('close', () => clearInterval(sweep));

  // Answers are written on the next turn of the event loop, all together, as node:http's route
  // does (http/reply.ts): measured faster than writing each at once (0.60x against 0.49x of
  // nginx here). Before a connection is handed over or ended, what is queued is written first.
  let queued: (Lane | Buffer)[] = [];
  const flush = () => {
    const list = queued;
    queued = [];
    for (let i = 0; i < list.length; i += 2) {
      const lane = list[i] as Lane;
      const data = list[i + 1] as Buffer;
      lane.queuedBytes -= data.length;
      // A client that does not read what it asked for: read no more from it until it has.
      if (!lane.socket.destroyed && !lane.socket.write(data)) lane.holdForDrain();
    }
    for (let i = 0; i < list.length; i += 2) (list[i] as Lane).afterFlush();
  };
  const later = (lane: Lane, data: Buffer) => {
    if (queued.length === 0) setImmediate(flush);
    queued.push(lane, data);
    lane.queuedBytes += data.length;
  };

  const hub: LaneHub & { closing: boolean } = {
    opts,
    binding: parserBinding,
    maxHeaderSize: (server as Server & { maxHeaderSize?: number }).maxHeaderSize ?? nodeMaxHeaderSize,
    counts: { answered: 0, handedOver: 0 },
    open,
    closing: false,
    answerBytes: new AnswerBytes(opts.keepAliveMs),
    later,
    flush,
    handToNode: (socket) => {
      for (const listener of behind) listener.call(server, socket);
    },
  };

  server.on('connection', (socket: Socket) => {
    if (hub.closing) hub.handToNode(socket);
    else new Lane(socket, hub);
  });

  return {
    counts: hub.counts,
    close() {
      hub.closing = true;
      for (const lane of open) if (!lane.busy) lane.endNow();
    },
  };
}
