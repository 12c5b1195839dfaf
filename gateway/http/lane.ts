import type { Socket } from 'node:net';
import type { KeyMemo } from '../api-keys.ts';
import type { Answer, LogLine, RequestNote, VerifyQuestion } from '../context.ts';
import type { AnswerBytes } from './answer-bytes.ts';
import { closeForHeadTimeout, WAITING_SINCE } from './connection-guard.ts';
import { CRLFCRLF, endsWithBlankLine, laneHeaders, type Parser, type ParserBinding } from './lane-parser.ts';

// One connection in the fast lane (http/fast-lane.ts, which explains what the lane answers and
// what it hands over): its parser, its head and its answers, one request at a time, in order.

export interface LaneOptions {
  /** The one path the lane answers (GET and HEAD). */
  path: string;
  /** The answer to a request for `path` (may throw: {@link LaneOptions.errorAnswer} turns it into a problem). */
  answer(note: RequestNote, request: VerifyQuestion): Answer | Promise<Answer>;
  errorAnswer(error: unknown, note: RequestNote): Answer;
  /** Called once per answered request, after its answer is written (the access log), or null. */
  logRequest: ((method: string, path: string, status: number, started: number, note: RequestNote) => void) | null;
  /** The gateway's log (the 408 to a head that never came is logged as the connection guard logs it). */
  log: (line: LogLine) => void;
  keepAliveMs: number;
  headersMs: number;
  requestMs: number;
  issuer: string;
  sweepMs?: number;
}

/** What all the lanes of one server share, made once by `installFastLane` (http/fast-lane.ts). */
export interface LaneHub {
  readonly opts: LaneOptions;
  readonly binding: ParserBinding;
  readonly maxHeaderSize: number;
  readonly counts: { answered: number; handedOver: number };
  readonly open: Set<Lane>;
  /** The lane is closing: no request is answered any more. */
  readonly closing: boolean;
  readonly answerBytes: AnswerBytes;
  /** Queues an answer for the next write of every queued answer (on the next turn of the event loop). */
  later(lane: Lane, data: Buffer): void;
  /** Writes every queued answer now. */
  flush(): void;
  /** Gives a connection to node:http's own connection listeners, as if it had just connected. */
  handToNode(socket: Socket): void;
}

/** Answers of one connection queued or waiting in its socket beyond which its requests wait. */
const MAX_UNSENT = 64 * 1024;

/** A connection taken by the lane: answered here until its first request that is node:http's, then handed over for good. */
export class Lane {
  buffered: Buffer | null = null;
  /** Answering a request that waits on a read; reading is paused meanwhile. */
  busy = false;
  /** Waiting for written answers to drain; reading is paused meanwhile. */
  draining = false;
  /** Stopped with answers worth {@link MAX_UNSENT} queued for the next write; reading is paused until they are written. */
  held = false;
  /** What is buffered is the start of a head, waiting for the rest. */
  partial = false;
  /** Bytes of this connection's answers queued for the next write. */
  queuedBytes = 0;
  /** When the lane began waiting for the current head (accept, or the last answer). */
  waitingSince = Date.now();
  answeredOne = false;
  deadline: number;
  parser: Parser | null;
  // What the parser reported for the head just executed.
  method = 0;
  major = 0;
  minor = 0;
  target = '';
  headers: string[] | undefined = undefined;
  authorization: string | undefined = undefined;
  ifNoneMatch: string | undefined = undefined;
  keyMemo: KeyMemo = { header: undefined, answer: undefined, loads: -1 };
  keepAlive = false;
  upgrade = false;
  complete = false;
  tooManyHeaders = false;
  /** Heads the parser reported in the last execute, and whether a body came with them. */
  heads = 0;
  hadBody = false;

  constructor(
    readonly socket: Socket,
    private readonly hub: LaneHub,
  ) {
    this.deadline = this.waitingSince + hub.opts.headersMs;
    const p = (this.parser = new hub.binding.HTTPParser());
    this.resetParser();
    p[this.hub.binding.HTTPParser.kOnHeaders] = () => {
      // More than 32 header lines arrive in parts; node:http handles those.
      this.tooManyHeaders = true;
    };
    p[this.hub.binding.HTTPParser.kOnHeadersComplete] = (major: number, minor: number, headers: string[] | undefined, method: number, url: string, _s: unknown, _m: unknown, upgrade: boolean, keepAlive: boolean) => {
      this.major = major;
      this.minor = minor;
      this.headers = headers;
      this.method = method;
      this.target = url;
      this.upgrade = upgrade;
      this.keepAlive = keepAlive;
      this.heads++;
      return 0;
    };
    p[this.hub.binding.HTTPParser.kOnBody] = () => {
      this.hadBody = true;
    };
    p[this.hub.binding.HTTPParser.kOnMessageComplete] = () => {
      this.complete = true;
    };
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    this.hub.open.add(this);
  }

  onData = (chunk: Buffer): void => {
    this.buffered = this.buffered ? Buffer.concat([this.buffered, chunk]) : chunk;
    if (!this.busy) this.pump();
  };

  onEnd = (): void => {
    // Only ever with every whole request answered (reading is paused while an answer waits, so
    // the end waits behind it). The start of a head left over can never be finished: the
    // connection ends without an answer to it, as node:http ends it.
    this.endNow();
  };

  /** Answers wait in the socket (the client is not reading them): read no more requests until they are out. */
  holdForDrain(): void {
    if (this.draining || !this.parser) return;
    this.draining = true;
    this.socket.pause();
    this.socket.once('drain', this.onDrain);
  }

  onDrain = (): void => {
    this.draining = false;
    this.pump();
    this.readMore();
  };

  /** After queued answers were written: go on with requests held back while they were queued. */
  afterFlush(): void {
    if (!this.held) return;
    // Written now: if the socket took them all, go on; if not, its drain will.
    this.held = false;
    if (this.draining) return;
    this.pump();
    this.readMore();
  }

  /** Reading resumes only when nothing holds it: an answer waiting on a file, answers waiting to drain or to be written. */
  readMore(): void {
    if (this.parser && !this.busy && !this.draining && !this.held) this.socket.resume();
  }

  onError = (): void => {
    this.socket.destroy();
  };

  onClose = (): void => {
    this.hub.open.delete(this);
    this.releaseParser();
  };

  /** Answers every whole head buffered, one at a time; hands over at the first one that is not the lane's. */
  pump(): void {
    while (this.buffered && !this.busy && !this.draining && !this.held) {
      if (this.hub.closing) return this.endNow();
      // Many pipelined requests at once: answer the rest once these answers are out, as
      // node:http pauses its parser when a connection's answers pile up.
      if (this.socket.writableLength >= MAX_UNSENT) return this.holdForDrain();
      if (this.queuedBytes >= MAX_UNSENT) {
        this.held = true;
        this.socket.pause();
        return;
      }
      const data = this.buffered;
      // The common case, one whole head alone in what was read: parsed as it is, with no search
      // for its end. Anything else that ends the same way (requests pipelined, a body, an
      // error) is read again below, head by head, as if this had not been tried.
      if (!this.partial && data.length <= this.hub.maxHeaderSize && endsWithBlankLine(data)) {
        const parsed = this.execute(data);
        if (parsed === data.length && this.heads === 1 && this.complete && !this.hadBody && !this.tooManyHeaders && this.isLanes()) {
          this.buffered = null;
          this.serve();
          continue;
        }
        this.resetParser();
      }
      const end = data.indexOf(CRLFCRLF);
      if (end < 0) {
        // An incomplete head: wait for the rest (its deadline is the head's: 408 if it never
        // comes), unless it is already too long or already wrong, which node:http answers
        // (431, 400) as soon as it sees them.
        if (data.length >= this.hub.maxHeaderSize || !this.parsesSoFar(data)) return this.handOver();
        this.partial = true;
        this.deadline = this.waitingSince + this.hub.opts.headersMs;
        return;
      }
      if (end + 4 > this.hub.maxHeaderSize) return this.handOver();
      if (this.partial) {
        this.partial = false;
        this.resetParser();
      }
      const headLength = end + 4;
      const parsed = this.execute(headLength === data.length ? data : data.subarray(0, headLength));
      if (parsed !== headLength || !this.complete || this.tooManyHeaders || !this.isLanes()) return this.handOver();
      this.buffered = headLength === data.length ? null : data.subarray(headLength);
      this.serve();
    }
    if (!this.busy && this.hub.closing) this.endNow();
  }

  /** Whether the start of a head parses (checked afresh each time more of it arrives; the parser is reset after). */
  parsesSoFar(data: Buffer): boolean {
    this.resetParser();
    const parsed = this.execute(data);
    return parsed === data.length && !this.complete && this.headers === undefined && !this.tooManyHeaders;
  }

  /** Runs the parser over `data`, what it reported for the last bytes cleared first. */
  execute(data: Buffer): number | Error {
    this.complete = false;
    this.headers = undefined;
    this.heads = 0;
    this.hadBody = false;
    return this.parser!.execute(data);
  }

  resetParser(): void {
    this.parser!.initialize(this.hub.binding.HTTPParser.REQUEST, {}, this.hub.maxHeaderSize, 0);
    this.tooManyHeaders = false;
  }

  /** The one kind of request the lane answers; anything else is node:http's. */
  isLanes(): boolean {
    if (this.major !== 1 || this.minor !== 1 || !this.keepAlive || this.upgrade) return false;
    const method = this.hub.binding.methods[this.method];
    if (method !== 'GET' && method !== 'HEAD') return false;
    const t = this.target, path = this.hub.opts.path;
    if (!t.startsWith(path) || (t.length > path.length && t.charCodeAt(path.length) !== 63 /* ? */)) return false;
    return this.headers !== undefined && laneHeaders(this.headers, this);
  }

  serve(): void {
    const started = this.hub.opts.logRequest ? performance.now() : 0;
    const method = this.hub.binding.methods[this.method]!;
    // The clock is read once for a request answered at once: the answer and its Date line use it.
    const now = Date.now();
    const request: VerifyQuestion = { target: this.target, authorization: this.authorization, ifNoneMatch: this.ifNoneMatch, remoteAddress: this.socket.remoteAddress, keyMemo: this.keyMemo, now };
    const note: RequestNote = {};
    let answer: Answer | Promise<Answer>;
    try {
      answer = this.hub.opts.answer(note, request);
    } catch (error) {
      answer = this.hub.opts.errorAnswer(error, note);
    }
    if (!(answer instanceof Promise)) return this.write(answer, method, started, note, now);
    // Answered later (a file read): stop reading meanwhile, so later requests, and the
    // client's end, wait in order behind this answer.
    this.busy = true;
    this.deadline = now + this.hub.opts.requestMs;
    this.socket.pause();
    answer
      .catch((error: unknown) => this.hub.opts.errorAnswer(error, note))
      .then((a) => {
        this.busy = false;
        if (this.socket.destroyed) return;
        this.write(a, method, started, note, Date.now());
        this.pump();
        this.readMore();
      });
  }

  write(answer: Answer, method: string, started: number, note: RequestNote, now: number): void {
    const out = this.hub.answerBytes.of(answer, method === 'HEAD', now);
    this.hub.later(this, out);
    this.hub.counts.answered++;
    this.answeredOne = true;
    this.waitingSince = now;
    this.deadline = now + this.hub.opts.keepAliveMs;
    this.hub.opts.logRequest?.(method, this.hub.opts.path, answer.status, started, note);
  }

  /**
   * The deadline passed: a head that never came (or never finished) gets the connection guard's
   * 408; an idle connection, one whose answer took over `requestMs`, or one whose client stopped
   * reading its answers for `keepAliveMs`, is closed.
   */
  expire(): void {
    this.hub.open.delete(this);
    if (!this.busy && (this.partial || !this.answeredOne)) closeForHeadTimeout(this.socket, this.hub.opts);
    else this.socket.destroy();
  }

  /** Ends the connection once what was written is out (the client ended its side, or the gateway is closing). */
  endNow(): void {
    this.hub.open.delete(this);
    this.hub.flush();
    this.buffered = null;
    this.socket.destroySoon();
  }

  /** Gives the connection to node:http from the first byte not yet answered. */
  handOver(): void {
    const socket = this.socket;
    this.hub.flush();
    socket.pause();
    socket.removeListener('data', this.onData);
    socket.removeListener('end', this.onEnd);
    socket.removeListener('error', this.onError);
    socket.removeListener('close', this.onClose);
    socket.removeListener('drain', this.onDrain);
    this.hub.open.delete(this);
    this.releaseParser();
    if (this.buffered) socket.unshift(this.buffered);
    this.buffered = null;
    this.hub.counts.handedOver++;
    // The connection guard counts the head's deadline from when it began to be awaited here.
    (socket as Socket & { [WAITING_SINCE]?: number })[WAITING_SINCE] = this.waitingSince;
    this.hub.handToNode(socket);
    // node:http reads through its own parser from here; the bytes put back reach it once the
    // stream flows again (it was paused above so that putting them back emitted nothing).
    socket.resume();
  }

  releaseParser(): void {
    const parser = this.parser;
    this.parser = null;
    // As node:http does: free the native parser once its callbacks have unwound.
    if (parser) setImmediate(() => parser.close());
  }
}
