import { createRequire } from 'node:module';
import { STATUS_CODES, maxHeaderSize as nodeMaxHeaderSize, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { KeyMemo } from '../api-keys.ts';
import type { Answer, FilledBody, LogLine, RequestNote, SharedHeaders, VerifyQuestion } from '../context.ts';
import { closeForHeadTimeout, WAITING_SINCE } from './connection-guard.ts';
import { digitCount, rateLimitLinesLength, writeDigits, writeRateLimitLines } from '../rate-limit.ts';
import { writeLatin1 } from '../../core/latin1.ts';

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
 * Needs the `HTTPParser` of `_http_common` (Node.js's own module, present in every release this
 * project runs on); without it the lane is not installed and node:http serves everything.
 */
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

export interface FastLane {
  /** Stops taking requests: idle connections are closed now, busy ones after their answer. */
  close(): void;
  /** Requests answered in the lane and connections handed to node:http (for tests). */
  readonly counts: { answered: number; handedOver: number };
}

interface ParserBinding {
  HTTPParser: {
    new (): Parser;
    REQUEST: number;
    kOnHeaders: number;
    kOnHeadersComplete: number;
    kOnBody: number;
    kOnMessageComplete: number;
  };
  methods: string[];
}

interface Parser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | Error;
  close(): void;
  [callback: number]: unknown;
}

const binding = loadBinding();

function loadBinding(): ParserBinding | null {
  try {
    const common = createRequire(import.meta.url)('_http_common') as Partial<ParserBinding>;
    const P = common.HTTPParser;
    if (typeof P !== 'function' || !Array.isArray(common.methods) || typeof P.kOnHeadersComplete !== 'number') return null;
    return common as ParserBinding;
  } catch {
    return null;
  }
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
/** Whether `data` ends with CR LF CR LF, the end of a head. */
function endsWithBlankLine(data: Buffer): boolean {
  const n = data.length;
  return n >= 4 && data[n - 1] === 10 && data[n - 2] === 13 && data[n - 3] === 10 && data[n - 4] === 13;
}
/** The length of a flat name/value list as header lines, `name: value` CR LF each. */
function headerLinesLength(list: readonly string[]): number {
  let length = 0;
  for (let i = 0; i < list.length; i += 2) length += list[i]!.length + list[i + 1]!.length + 4;
  return length;
}

/** Writes those lines at `at`, one byte a character (every name and value is the gateway's own, Latin-1); returns the offset after them. */
function writeHeaderLines(out: Uint8Array, at: number, list: readonly string[]): number {
  for (let i = 0; i < list.length; i += 2) {
    at = writeLatin1(out, at, list[i]!);
    out[at++] = 58; // :
    out[at++] = 32;
    at = writeLatin1(out, at, list[i + 1]!);
    out[at++] = 13;
    out[at++] = 10;
  }
  return at;
}

/** The fixed bytes of a filled body's lines: `etag: <tag>` CR LF `content-length: <n>` CR LF. */
const ETAG_LINE_START = Buffer.from('etag: ', 'latin1');
const LENGTH_LINE_START = Buffer.from('\r\ncontent-length: ', 'latin1');

/** The length of a filled body's lines. */
function fillLinesLength(fill: FilledBody): number {
  return ETAG_LINE_START.length + fill.etagLength + LENGTH_LINE_START.length + digitCount(fill.length) + 2;
}

/** Writes a filled body's ETag and Content-Length lines at `at` (as node:http's writer gives them); returns the offset after them. */
function writeFillLines(out: Uint8Array, at: number, fill: FilledBody): number {
  out.set(ETAG_LINE_START, at);
  at = fill.writeEtag(out, at + ETAG_LINE_START.length);
  out.set(LENGTH_LINE_START, at);
  at = writeDigits(out, at + LENGTH_LINE_START.length, fill.length);
  out[at++] = 13;
  out[at++] = 10;
  return at;
}

/** Answers of one connection queued or waiting in its socket beyond which its requests wait. */
const MAX_UNSENT = 64 * 1024;

/**
 * Puts the lane in front of `server`: the server's 'connection' listeners (node:http's own, and
 * any added before, such as the connection guard) are taken off and run only for connections
 * handed over. Returns null when the parser binding is missing.
 */
export function installFastLane(server: Server, opts: LaneOptions): FastLane | null {
  if (!binding) return null;
  const { HTTPParser, methods } = binding;
  const behind = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const maxHeaderSize = (server as Server & { maxHeaderSize?: number }).maxHeaderSize ?? nodeMaxHeaderSize;
  const keepAliveLine = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(opts.keepAliveMs / 1000)}\r\n\r\n`;
  const counts = { answered: 0, handedOver: 0 };
  const open = new Set<Lane>();
  let closing = false;

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

  // An answer is written as one buffer copied together from parts kept as bytes: the status
  // line, the shared header lists (kept from their second use), the date and connection lines (once a
  // second), the body. Built as one string instead, V8 spent more time flattening it than the
  // rest of the answer cost (perf). Every header name and value is the gateway's own (fixed
  // text, entity tags, quota counters), never a request's bytes, so none needs node:http's
  // character checks.
  const keptLines = (shared: SharedHeaders): Buffer | null => {
    const kept = shared.lines;
    if (kept) return kept;
    if (kept === undefined) {
      // First use: written straight into the answer, not kept. Most records read once (a working
      // set larger than the cache) are never asked for again while cached, and keeping a
      // rendering for each cost more memory than it saved (peak RSS 272 MB against 236 MB over a
      // million records, random access).
      shared.lines = null;
      return null;
    }
    // Second use: kept on the shared headers themselves, so it goes when they go, with no weak
    // table for the collector to sweep; in memory of its own, not a slice of Buffer's shared
    // 8 KiB pool, which one kept slice would hold whole.
    const bytes = Buffer.allocUnsafeSlow(headerLinesLength(shared.fields));
    writeHeaderLines(bytes, 0, shared.fields);
    shared.lines = bytes;
    return bytes;
  };
  // By status code, an array index (cheaper than a map lookup per answer); made with room for
  // every code, so its elements stay a plain array's.
  const statusLines = new Array<Buffer | undefined>(600);
  const statusLine = (status: number): Buffer => statusLines[status] ?? (statusLines[status] = Buffer.from(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n`, 'latin1'));
  let tailSecond = -1;
  let tail = Buffer.alloc(0);
  const dateAndConnection = (now: number): Buffer => {
    const second = Math.floor(now / 1000);
    if (second !== tailSecond) {
      tailSecond = second;
      tail = Buffer.from(`Date: ${new Date(second * 1000).toUTCString()}\r\n${keepAliveLine}`, 'latin1');
    }
    return tail;
  };

  class Lane {
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
    deadline = this.waitingSince + opts.headersMs;
    parser: Parser | null = new HTTPParser();
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

    constructor(readonly socket: Socket) {
      const p = this.parser!;
      this.resetParser();
      p[HTTPParser.kOnHeaders] = () => {
        // More than 32 header lines arrive in parts; node:http handles those.
        this.tooManyHeaders = true;
      };
      p[HTTPParser.kOnHeadersComplete] = (major: number, minor: number, headers: string[] | undefined, method: number, url: string, _s: unknown, _m: unknown, upgrade: boolean, keepAlive: boolean) => {
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
      p[HTTPParser.kOnBody] = () => {
        this.hadBody = true;
      };
      p[HTTPParser.kOnMessageComplete] = () => {
        this.complete = true;
      };
      socket.on('data', this.onData);
      socket.on('end', this.onEnd);
      socket.on('error', this.onError);
      socket.on('close', this.onClose);
      open.add(this);
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
      open.delete(this);
      this.releaseParser();
    };

    /** Answers every whole head buffered, one at a time; hands over at the first one that is not the lane's. */
    pump(): void {
      while (this.buffered && !this.busy && !this.draining && !this.held) {
        if (closing) return this.endNow();
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
        if (!this.partial && data.length <= maxHeaderSize && endsWithBlankLine(data)) {
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
          if (data.length >= maxHeaderSize || !this.parsesSoFar(data)) return this.handOver();
          this.partial = true;
          this.deadline = this.waitingSince + opts.headersMs;
          return;
        }
        if (end + 4 > maxHeaderSize) return this.handOver();
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
      if (!this.busy && closing) this.endNow();
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
      this.parser!.initialize(HTTPParser.REQUEST, {}, maxHeaderSize, 0);
      this.tooManyHeaders = false;
    }

    /** The one kind of request the lane answers; anything else is node:http's. */
    isLanes(): boolean {
      if (this.major !== 1 || this.minor !== 1 || !this.keepAlive || this.upgrade) return false;
      const method = methods[this.method];
      if (method !== 'GET' && method !== 'HEAD') return false;
      const t = this.target;
      if (!t.startsWith(opts.path) || (t.length > opts.path.length && t.charCodeAt(opts.path.length) !== 63 /* ? */)) return false;
      const h = this.headers;
      if (!h) return false;
      let hosts = 0;
      let authorizations = 0;
      let validators = 0;
      this.authorization = undefined;
      this.ifNoneMatch = undefined;
      // Names compared by length first, then as clients usually spell them: no lower-cased copy
      // of every name of every request.
      for (let i = 0; i < h.length; i += 2) {
        const name = h[i]!;
        switch (name.length) {
          case 4:
            if (name === 'Host' || name.toLowerCase() === 'host') hosts++;
            break;
          case 13: {
            const lower = name === 'Authorization' ? 'authorization' : name.toLowerCase();
            if (lower === 'authorization') {
              authorizations++;
              this.authorization = h[i + 1];
            } else if (lower === 'if-none-match') {
              validators++;
              this.ifNoneMatch = h[i + 1];
            }
            break;
          }
          case 6:
          case 7:
          case 17: {
            const lower = name.toLowerCase();
            if (lower === 'expect' || lower === 'upgrade' || lower === 'transfer-encoding') return false;
            break;
          }
        }
      }
      return hosts === 1 && authorizations <= 1 && validators <= 1;
    }

    serve(): void {
      const started = opts.logRequest ? performance.now() : 0;
      const method = methods[this.method]!;
      // The clock is read once for a request answered at once: the answer and its Date line use it.
      const now = Date.now();
      const request: VerifyQuestion = { target: this.target, authorization: this.authorization, ifNoneMatch: this.ifNoneMatch, remoteAddress: this.socket.remoteAddress, keyMemo: this.keyMemo, now };
      const note: RequestNote = {};
      let answer: Answer | Promise<Answer>;
      try {
        answer = opts.answer(note, request);
      } catch (error) {
        answer = opts.errorAnswer(error, note);
      }
      if (!(answer instanceof Promise)) return this.write(answer, method, started, note, now);
      // Answered later (a file read): stop reading meanwhile, so later requests, and the
      // client's end, wait in order behind this answer.
      this.busy = true;
      this.deadline = now + opts.requestMs;
      this.socket.pause();
      answer
        .catch((error: unknown) => opts.errorAnswer(error, note))
        .then((a) => {
          this.busy = false;
          if (this.socket.destroyed) return;
          this.write(a, method, started, note, Date.now());
          this.pump();
          this.readMore();
        });
    }

    write(answer: Answer, method: string, started: number, note: RequestNote, now: number): void {
      const status = statusLine(answer.status);
      const shared = answer.headers;
      const fixed = keptLines(shared);
      const fixedLength = fixed ? fixed.length : headerLinesLength(shared.fields);
      // This answer's own headers are written name and value as they are, as the shared ones are
      // the first time: no line of text made for them (which its write then had to flatten and
      // copy out of JavaScript).
      const extra = answer.more;
      const quota = answer.quota;
      const end = dateAndConnection(now);
      // A body filled in place brings its ETag and Content-Length lines; its bytes, like a
      // body's, are left out of a HEAD answer.
      const fill = answer.fill;
      const body = method === 'HEAD' ? null : answer.body;
      const filledBody = method === 'HEAD' ? null : fill;
      const out = Buffer.allocUnsafe(status.length + fixedLength + (extra ? headerLinesLength(extra) : 0) + (fill ? fillLinesLength(fill) : 0) + (quota ? rateLimitLinesLength(quota) : 0) + end.length + (body ? body.length : 0) + (filledBody ? filledBody.length : 0));
      // TypedArray#set, not Buffer#copy: the same copies without copy()'s argument checks, which
      // cost more than copying these few hundred bytes.
      out.set(status, 0);
      let at = status.length;
      if (fixed) out.set(fixed, at);
      else writeHeaderLines(out, at, shared.fields);
      at += fixedLength;
      if (extra) at = writeHeaderLines(out, at, extra);
      if (fill) at = writeFillLines(out, at, fill);
      if (quota) at = writeRateLimitLines(out, at, quota);
      out.set(end, at);
      if (body) out.set(body, at + end.length);
      else if (filledBody) filledBody.writeBody(out, at + end.length);
      later(this, out);
      counts.answered++;
      this.answeredOne = true;
      this.waitingSince = now;
      this.deadline = now + opts.keepAliveMs;
      opts.logRequest?.(method, opts.path, answer.status, started, note);
    }

    /**
     * The deadline passed: a head that never came (or never finished) gets the connection guard's
     * 408; an idle connection, one whose answer took over `requestMs`, or one whose client stopped
     * reading its answers for `keepAliveMs`, is closed.
     */
    expire(): void {
      open.delete(this);
      if (!this.busy && (this.partial || !this.answeredOne)) closeForHeadTimeout(this.socket, opts);
      else this.socket.destroy();
    }

    /** Ends the connection once what was written is out (the client ended its side, or the gateway is closing). */
    endNow(): void {
      open.delete(this);
      flush();
      this.buffered = null;
      this.socket.destroySoon();
    }

    /** Gives the connection to node:http from the first byte not yet answered. */
    handOver(): void {
      const socket = this.socket;
      flush();
      socket.pause();
      socket.removeListener('data', this.onData);
      socket.removeListener('end', this.onEnd);
      socket.removeListener('error', this.onError);
      socket.removeListener('close', this.onClose);
      socket.removeListener('drain', this.onDrain);
      open.delete(this);
      this.releaseParser();
      if (this.buffered) socket.unshift(this.buffered);
      this.buffered = null;
      counts.handedOver++;
      // The connection guard counts the head's deadline from when it began to be awaited here.
      (socket as Socket & { [WAITING_SINCE]?: number })[WAITING_SINCE] = this.waitingSince;
      for (const listener of behind) listener.call(server, socket);
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

  server.on('connection', (socket: Socket) => {
    if (closing) {
      for (const listener of behind) listener.call(server, socket);
      return;
    }
    new Lane(socket);
  });

  return {
    counts,
    close() {
      closing = true;
      for (const lane of open) if (!lane.busy) lane.endNow();
    },
  };
}
