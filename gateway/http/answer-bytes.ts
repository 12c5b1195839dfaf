import { STATUS_CODES } from 'node:http';
import type { Answer, FilledBody, SharedHeaders } from '../context.ts';
import { rateLimitLinesLength, writeRateLimitLines } from '../rate-limit.ts';
import { digitCount, writeDigits } from '../decimal.ts';
import { writeLatin1 } from '../../core/latin1.ts';

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

/**
 * A whole HTTP/1.1 answer as one buffer, copied together from parts kept as bytes: the status
 * line, the shared header lists (kept from their second use), the date and connection lines (once
 * a second), the body. Built as one string instead, V8 spent more time flattening it than the rest
 * of the answer cost (perf). Every header name and value is the gateway's own (fixed text, entity
 * tags, quota counters), never a request's bytes, so none needs node:http's character checks.
 * The fast lane writes its answers with it (http/fast-lane.ts).
 */
export class AnswerBytes {
  // By status code, an array index (cheaper than a map lookup per answer); made with room for
  // every code, so its elements stay a plain array's.
  private readonly statusLines = new Array<Buffer | undefined>(600);
  private tailSecond = -1;
  private tail = Buffer.alloc(0);
  private readonly keepAliveLine: string;

  constructor(keepAliveMs: number) {
    this.keepAliveLine = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n\r\n`;
  }

  /** The answer's bytes; a HEAD answer's without its body. `now` gives its Date line. */
  of(answer: Answer, head: boolean, now: number): Buffer {
    const status = this.statusLine(answer.status);
    const shared = answer.headers;
    const fixed = keptLines(shared);
    const fixedLength = fixed ? fixed.length : headerLinesLength(shared.fields);
    // This answer's own headers are written name and value as they are, as the shared ones are
    // the first time: no line of text made for them (which its write then had to flatten and
    // copy out of JavaScript).
    const extra = answer.more;
    const quota = answer.quota;
    const end = this.dateAndConnection(now);
    // A body filled in place brings its ETag and Content-Length lines; its bytes, like a
    // body's, are left out of a HEAD answer.
    const fill = answer.fill;
    const body = head ? null : answer.body;
    const filledBody = head ? null : fill;
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
    return out;
  }

  private statusLine(status: number): Buffer {
    return this.statusLines[status] ?? (this.statusLines[status] = Buffer.from(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n`, 'latin1'));
  }

  private dateAndConnection(now: number): Buffer {
    const second = Math.floor(now / 1000);
    if (second !== this.tailSecond) {
      this.tailSecond = second;
      this.tail = Buffer.from(`Date: ${new Date(second * 1000).toUTCString()}\r\n${this.keepAliveLine}`, 'latin1');
    }
    return this.tail;
  }
}

/** The shared header lines as bytes, from their second use on; null before (written straight into the answer instead). */
function keptLines(shared: SharedHeaders): Buffer | null {
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
}
