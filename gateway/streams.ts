import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { TooManyStreamsError } from '../core/errors/errors.ts';

/** The answer a connection is writing now, so the idle deadline can say which (a property set per request, no closure). */
const ANSWER = Symbol('answer');
type Connection = Socket & { [ANSWER]?: ServerResponse };

/**
 * What a gateway process writes to its clients, bounded per API key and per client (core/limits.ts,
 * ANSWER_LIMITS):
 * - a key holds at most `perKey` streamed answers (mirror files) at once in this process: past it,
 *   TOO_MANY_STREAMS (429, Retry-After 1); a slot is given back when its answer closes, however;
 * - a connection on which nothing moved for `idleMs` while an answer was being written (its client
 *   took none of it) is cut: counted, logged at info. node:http's own socket inactivity timeout
 *   (`server.timeout`) keeps the time, so no answer pays for a timer of its own. A client that stops
 *   reading so costs one chunk beside the socket's buffer, for `idleMs`, and never a slot for longer.
 * Per process, not per gateway fleet: a cap shared through Redis would cost a round trip per stream
 * and leave slots taken by a process that died; the quota is what is shared.
 */
export class AnswerWrites {
  private readonly streams = new Map<string, number>();
  private readonly openAnswers = new Set<ServerResponse>();
  /** The guarded servers' open connections: one entry a connection, not one a request. */
  private readonly connections = new Set<Connection>();
  /** Streams refused at the cap since start. */
  refused = 0;
  /** Connections cut since start, their client not having taken a write within `idleMs`. */
  idleCuts = 0;

  constructor(
    readonly perKey: number,
    readonly idleMs: number,
    /** The gateway's log (its LogLine; typed here by shape, as context.ts names this module). */
    private readonly log: (line: Record<string, unknown> & { level: 'info'; msg: string }) => void,
  ) {}

  /** Takes one of `keyId`'s stream slots for `res`, given back when `res` closes (finished, failed or cut); TOO_MANY_STREAMS when the key holds them all. */
  openStream(keyId: string, res: ServerResponse): void {
    const held = this.streams.get(keyId) ?? 0;
    if (held >= this.perKey) {
      this.refused++;
      throw new TooManyStreamsError(
        `API key ${keyId} already has ${held} streamed answers open, the most one gateway process gives a key; finish one first`,
        1,
      );
    }
    this.streams.set(keyId, held + 1);
    this.openAnswers.add(res);
    res.once('close', () => {
      this.openAnswers.delete(res);
      const left = (this.streams.get(keyId) ?? 1) - 1;
      if (left > 0) this.streams.set(keyId, left);
      else this.streams.delete(keyId);
    });
  }

  /** Streams open now, all keys together. */
  get openStreams(): number {
    return this.openAnswers.size;
  }

  /** The bytes each open stream has written and its client not taken yet (the answer's and its socket's buffers). */
  buffered(): number[] {
    return [...this.openAnswers].map((res) => res.writableLength);
  }

  /**
   * Writes one chunk of a streamed answer: true at once when the socket took it without going
   * past its buffer, else a promise of whether the client took it (`drain`) before the connection
   * closed (or was cut for idling, see {@link guard}). Never more than one chunk waits: the caller
   * writes the next after.
   */
  write(res: ServerResponse, chunk: Uint8Array): boolean | Promise<boolean> {
    if (res.write(chunk)) return true;
    return new Promise((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve(!res.destroyed);
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }

  /**
   * Puts the idle deadline on every connection of `server`: node:http's socket inactivity timeout,
   * whose `timeout` event cuts a connection that was writing an answer its client did not take.
   * A connection idle between answers is closed as node:http would close it; `keepAliveMs` is shorter.
   */
  guard(server: Server): void {
    server.on('connection', (socket: Connection) => {
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
    server.setTimeout(this.idleMs, (socket: Connection) => {
      const res = socket[ANSWER];
      if (res && !res.writableFinished) this.cut(res);
      else socket.destroy();
    });
  }

  /** The answers the guarded servers' open connections are writing, or wrote last (see `headersSent`, `writableFinished`). */
  *answersInFlight(): Iterable<ServerResponse> {
    for (const socket of this.connections) {
      const res = socket[ANSWER];
      if (res && !res.writableFinished) yield res;
    }
  }

  /** Names the answer `res`'s connection is writing now: called once per request, before it is answered. */
  answering(res: ServerResponse): void {
    const socket = res.socket as Connection | null;
    if (socket) socket[ANSWER] = res;
  }

  private cut(res: ServerResponse): void {
    if (res.destroyed || res.writableFinished) return;
    this.idleCuts++;
    this.log({
      level: 'info',
      msg: 'client did not take a write within the idle deadline; connection cut',
      path: res.req.url?.split('?', 1)[0],
      idle_ms: this.idleMs,
      buffered_bytes: res.writableLength,
    });
    res.destroy();
  }
}
