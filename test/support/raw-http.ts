/**
 * The tests' one HTTP/1.1 client over raw TCP (node:net), for the security suites and
 * `rawRequest` (./gateway.ts): the bytes written are
 * exactly the bytes given (no normalization of the method, target, header names or line endings,
 * as fetch and node:http would do), and the answer is parsed strictly enough to count responses
 * (Content-Length, chunked, HEAD, 1xx, bodies delimited by close), to tell whether the server
 * closed the connection, and to bound every wait.
 */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  /** The status line and header lines as received (latin1), without the final empty line. */
  head: string;
  /** Header values by lower-cased name, in the order received. */
  headers: Map<string, string[]>;
  /** The body bytes (de-chunked); empty for HEAD, 1xx, 204 and 304. */
  body: Buffer;
  /** Bytes between the end of the head and the end of the body as they were on the wire. */
  wireBodyLength: number;
}

export interface Exchange {
  /** Final (non-1xx) responses, in order. */
  responses: RawResponse[];
  /** Informational (1xx) responses seen. */
  interim: RawResponse[];
  /** The server closed (or reset) the connection before we stopped listening. */
  closed: boolean;
  /** We stopped listening because `timeoutMs` ran out. */
  timedOut: boolean;
  /** Bytes received that do not form a complete response (garbage or a truncated answer). */
  rest: Buffer;
  /** Milliseconds from connect to the first byte of the first response (null if none). */
  firstByteMs: number | null;
  /** Milliseconds from connect to close (null if not closed). */
  closedMs: number | null;
}

export interface ExchangeOptions {
  /** For each request written, whether it is a HEAD (its response has no body). */
  heads?: boolean[];
  /**
   * Stop listening this long after this many final responses were parsed (to see whether more
   * bytes or a close follow). Without it, listening ends at close or at `timeoutMs`.
   */
  expect?: number;
  /** With `expect`: how long to keep listening after the last expected response. */
  graceMs?: number;
  /** Upper bound on the whole exchange. */
  timeoutMs?: number;
}

/** Writes `data` on a fresh connection to 127.0.0.1:`port` and collects what comes back. */
export function exchange(port: number, data: string | Buffer, opts: ExchangeOptions = {}): Promise<Exchange> {
  const { heads = [], expect, graceMs = 200, timeoutMs = 5000 } = opts;
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    let buffer = Buffer.alloc(0);
    const responses: RawResponse[] = [];
    const interim: RawResponse[] = [];
    let closed = false;
    let timedOut = false;
    let firstByteMs: number | null = null;
    let closedMs: number | null = null;
    let done = false;
    let grace: NodeJS.Timeout | null = null;

    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (grace) clearTimeout(grace);
      socket.destroy();
      resolve({ responses, interim, closed, timedOut, rest: buffer, firstByteMs, closedMs });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      finish();
    }, timeoutMs);

    const parse = (atEnd: boolean) => {
      for (;;) {
        const parsed = parseOne(buffer, heads[responses.length] ?? false, atEnd);
        if (!parsed) return;
        buffer = buffer.subarray(parsed.used);
        if (parsed.response.status >= 100 && parsed.response.status < 200) interim.push(parsed.response);
        else responses.push(parsed.response);
        if (expect !== undefined && responses.length >= expect && !grace) grace = setTimeout(finish, graceMs);
      }
    };

    socket.on('data', (chunk: Buffer) => {
      if (firstByteMs === null) firstByteMs = performance.now() - started;
      buffer = Buffer.concat([buffer, chunk]);
      parse(false);
    });
    socket.on('error', () => undefined); // a reset counts as a close
    socket.on('close', () => {
      closed = true;
      closedMs = performance.now() - started;
      parse(true);
      finish();
    });
    socket.write(data);
  });
}

/** Parses one response from the start of `buf`; null when it is not complete yet. */
export function parseOne(buf: Buffer, isHead: boolean, atEnd: boolean): { response: RawResponse; used: number } | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = buf.subarray(0, end).toString('latin1');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine);
  if (!m) return null; // not a response: left in `rest`
  const status = Number(m[1]);
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  const start = end + 4;
  const noBody = isHead || (status >= 100 && status < 200) || status === 204 || status === 304;
  if (noBody) return { response: { status, head, headers, body: Buffer.alloc(0), wireBodyLength: 0 }, used: start };
  const te = (headers.get('transfer-encoding') ?? []).join(',').toLowerCase();
  if (/\bchunked\b/.test(te)) {
    const parts: Buffer[] = [];
    let at = start;
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return null;
      const size = parseInt(buf.subarray(at, lineEnd).toString('latin1').split(';')[0]!, 16);
      if (Number.isNaN(size)) return null;
      if (size === 0) {
        const trailerEnd = buf.indexOf('\r\n', lineEnd + 2);
        if (trailerEnd < 0) return null;
        // Trailers are not used by the gateway; expect the empty line right away.
        const used = trailerEnd + 2;
        return { response: { status, head, headers, body: Buffer.concat(parts), wireBodyLength: used - start }, used };
      }
      if (buf.length < lineEnd + 2 + size + 2) return null;
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = headers.get('content-length');
  if (length) {
    const n = Number(length[0]);
    if (buf.length < start + n) return null;
    return { response: { status, head, headers, body: buf.subarray(start, start + n), wireBodyLength: n }, used: start + n };
  }
  // No length: the body runs to the close.
  if (!atEnd) return null;
  return { response: { status, head, headers, body: buf.subarray(start), wireBodyLength: buf.length - start }, used: buf.length };
}

/** The first value of a header (lower-cased name), or undefined. */
export function header(r: RawResponse, name: string): string | undefined {
  return r.headers.get(name.toLowerCase())?.[0];
}

/** A request in wire form: request line, header lines (as given, in order), CRLF endings, empty line, body. */
export function wire(requestLine: string, headerLines: string[], body = ''): string {
  return `${[requestLine, ...headerLines].join('\r\n')}\r\n\r\n${body}`;
}
