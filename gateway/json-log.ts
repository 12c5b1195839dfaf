import pino from 'pino';
import { remembered } from '../core/memo.ts';
import type { AccessLine, LogLine } from './context.ts';

/** The gateway's log as `mvr serve` writes it: one JSON object a line. */
export interface JsonLog {
  log(line: LogLine): void;
  /** One access line, written as {@link accessLogLine} of it would be by `log`, in the same batches. */
  request(line: AccessLine): void;
  /** Writes every line logged so far, then closes the log (lines logged after it are dropped). */
  close(): Promise<void>;
}

/**
 * Lines gather in memory and go out in one write once this many bytes are waiting (about 350 access
 * lines of a hot record; at 20,000 requests a second, some 60 writes a second instead of 460), or at the latest FLUSH_MS after they
 * were logged. A write takes at most WRITE_BYTES (sonic-boom's `maxWrite`, which must exceed the batch).
 */
const BATCH_BYTES = 64 * 1024;
const WRITE_BYTES = 2 * BATCH_BYTES;
const FLUSH_MS = 100;

/**
 * pino's `time` member in ISO 8601 UTC, made once per millisecond: a busy gateway logs several
 * lines a millisecond, and formatting the date was a tenth of the cost of a line.
 */
function isoTime(): () => string {
  let ms = -1;
  let member = '';
  return () => {
    const now = Date.now();
    if (now !== ms) {
      ms = now;
      member = `,"time":"${new Date(now).toISOString()}"`;
    }
    return member;
  };
}

/**
 * The log on a file descriptor (stdout by default), through pino over its asynchronous
 * destination (sonic-boom): a request never waits on a write, and a busy gateway writes many
 * lines per system call instead of one each (a synchronous write per line took a fifth of the
 * gateway's CPU). Each line is `{"level","time","msg",...}`: the level by name, the time in ISO
 * 8601 UTC, then the line's own members in their order. Lines still waiting when the process
 * exits are written synchronously by pino's exit hook; a graceful shutdown awaits `close()` first.
 */
export function openJsonLog(fd = 1): JsonLog {
  // In sonic-boom's buffer mode a batch is counted by the length of each line added to it; in its
  // text mode every write measured the whole pending batch again (its UTF-8 length, a growing
  // string made flat each time), most of an access line's cost. So every line goes in as bytes,
  // pino's own through a writer that hands them on, in the order they were logged.
  const destination = pino.destination({
    dest: fd,
    sync: false,
    minLength: BATCH_BYTES,
    maxWrite: WRITE_BYTES,
    periodicFlush: FLUSH_MS,
    contentMode: 'buffer',
  });
  // sonic-boom's types name only text for `write`; in buffer mode it takes bytes (its README).
  const writeBytes = (bytes: Buffer) => destination.write(bytes as unknown as string);
  const logger = pino(
    { base: null, timestamp: isoTime(), formatters: { level: (label) => ({ level: label }) } },
    { write: (text: string) => writeBytes(Buffer.from(text)) },
  );
  const time = isoTime();
  let closed: Promise<void> | null = null;
  return {
    log(line) {
      if (closed) return;
      const { level, ...members } = line;
      logger[level](members);
    },
    // Straight to pino's destination, after the lines logged before it: pino's serializer walks
    // a line's members generically, which was most of an access line's cost.
    request(line) {
      if (!closed) writeBytes(Buffer.from(accessLineText(line, time())));
    },
    // Ending the destination, not flushing it: sonic-boom's flush() answers at the end of the
    // write in flight and leaves lines logged meanwhile (fewer than a batch) in memory; end()
    // writes until none is left.
    close: () =>
      (closed ??= new Promise((resolve, reject) => {
        destination.once('close', () => resolve());
        destination.once('error', reject);
        destination.end();
      })),
  };
}

/** An access line as a log line object (what `log` is given when access lines have no writer of their own). */
export function accessLogLine(a: AccessLine): LogLine {
  const line: LogLine = {
    level: 'info',
    msg: 'request',
    method: a.method,
    path: a.path,
    status: a.status,
    duration_ms: a.durationMs,
    key_id: a.keyId,
  };
  if (a.domain) line.domain = a.domain;
  if (a.code) line.code = a.code;
  if (a.requestId) line.request_id = a.requestId;
  return line;
}

/** The text `log` writes for {@link accessLogLine} of `a` (`time` is the `,"time":"..."` member), formatted member by member. */
export function accessLineText(a: AccessLine, time: string): string {
  const key = a.keyId === null ? 'null' : quoted(a.keyId);
  const domain = a.domain ? `,"domain":${quoted(a.domain)}` : '';
  const code = a.code ? `,"code":${quoted(a.code)}` : '';
  // A request id is new with every server failure: quoted as it comes, never kept.
  const id = a.requestId ? `,"request_id":${JSON.stringify(a.requestId)}` : '';
  return `{"level":"info"${time},"msg":"request","method":${quoted(a.method)},"path":${quoted(a.path)},"status":${a.status},"duration_ms":${a.durationMs},"key_id":${key}${domain}${code}${id}}\n`;
}

/**
 * The JSON string of a member that comes back line after line (a method, a path, a key id, a domain,
 * a code), made once: quoting them was a fifth of a line's text.
 */
const quoted = remembered((value) => JSON.stringify(value), { entries: 10_000, longestInput: 256 });
