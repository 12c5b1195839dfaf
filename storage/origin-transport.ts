import type { Dispatcher, request } from 'undici';
import { readCapped } from '#shared';
import { ReadDeadlineError, ReadTooLargeError } from '../core/errors/errors.ts';
import { READ_LIMITS, readLimitOf } from '../core/limits.ts';

export interface OriginTransportOptions {
  /** Connections kept per origin. */
  connections?: number;
  /** Per-attempt limit on waiting for headers and between two chunks of a body. */
  timeoutMs?: number;
  /** Retries of a failed attempt (network error, 5xx), with exponential backoff. */
  retries?: number;
  /** Shortens every read's total deadline (retries included) below the limits table's (ms); tests set a short one. */
  deadlineMs?: number;
  /** Told about every read refused at its size limit or its deadline (for the log and metrics). */
  onReadRefused?: (refusal: ReadTooLargeError | ReadDeadlineError) => void;
}

export type HttpMethod = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';

export interface OriginAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * How the gateway and `mvr publish` talk to a records origin (a plain HTTP origin or S3): one
 * keep-alive pool, a timeout on every attempt, and retries with backoff on network errors and
 * 5xx answers (undici's RetryAgent). Every answer is bounded by the limits table (core/limits.ts) for
 * the kind of file asked for: its body is read into memory only up to the kind's size, and the
 * whole read (retries included) ends at the kind's deadline, so an origin that sends without end or
 * drips a byte at a time costs a bounded amount of memory and time.
 */
export class OriginTransport {
  private readonly options: OriginTransportOptions;
  private connections: Promise<{ dispatcher: Dispatcher; request: typeof request }> | null = null;
  private closing: Promise<void> | null = null;

  constructor(options: OriginTransportOptions = {}) {
    this.options = options;
  }

  /**
   * The keep-alive pool, made at the first request: undici (a large import) is loaded with it, so
   * a process whose records are a folder, or that never reaches its origin, does not load it.
   */
  private pool(): Promise<{ dispatcher: Dispatcher; request: typeof request }> {
    this.connections ??= import('undici').then(({ Agent, RetryAgent, request }) => {
      const agent = new Agent({ connections: this.options.connections ?? 32, keepAliveTimeout: 10_000, pipelining: 1 });
      const dispatcher = new RetryAgent(agent, {
        maxRetries: this.options.retries ?? 2,
        minTimeout: 50,
        maxTimeout: 500,
        timeoutFactor: 3,
        methods: ['GET', 'PUT', 'HEAD'],
        statusCodes: [500, 502, 503, 504],
        errorCodes: [
          'ECONNRESET',
          'ECONNREFUSED',
          'ENOTFOUND',
          'ENETUNREACH',
          'EHOSTUNREACH',
          'EPIPE',
          'UND_ERR_SOCKET',
          'UND_ERR_HEADERS_TIMEOUT',
          'UND_ERR_BODY_TIMEOUT',
        ],
      });
      return { dispatcher, request };
    });
    return this.connections;
  }

  /**
   * One request, its answer read whole. `path` names the file asked for (a path in a build or a
   * bucket key), whose kind gives the read's limits; `maxBytes` may lower its size limit (a
   * ranged read). Past the size, {@link ReadTooLargeError} as soon as the length is known or read
   * past; past the deadline, {@link ReadDeadlineError}: neither reads on.
   */
  async send(
    url: string,
    init: { method?: HttpMethod; headers?: Record<string, string>; body?: Buffer; path?: string; maxBytes?: number } = {},
  ): Promise<OriginAnswer> {
    const { dispatcher, request } = await this.pool();
    // An upload (`mvr publish`: a PUT, or a multipart upload's POST or DELETE) answers with a
    // message only, and takes as long as its bytes need: it keeps the per-attempt limit alone. A
    // read has its kind's limits.
    const upload = init.method !== undefined && init.method !== 'GET' && init.method !== 'HEAD';
    const limit = readLimitOf(upload ? '' : (init.path ?? ''), this.options.deadlineMs);
    const maxBytes = Math.min(limit.bytes, init.maxBytes ?? Number.POSITIVE_INFINITY);
    const timeoutMs = this.options.timeoutMs ?? 2000;
    const signal = upload ? undefined : AbortSignal.timeout(limit.deadlineMs);
    try {
      const res = await request(url, {
        method: init.method ?? 'GET',
        headers: init.headers,
        body: init.body,
        dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal,
      });
      // An error answer's body is only ever a message: it gets the size of one, not the file's.
      const cap = res.statusCode < 300 ? maxBytes : Math.min(limit.bytes, READ_LIMITS.other.bytes);
      // A HEAD's length is the object's, with no body to read. A redirect is an answer (undici's
      // request follows none), read as an error message: the one rule of packages/shared's reader.
      const contentLength = res.headers['content-length'];
      const declared = init.method !== 'HEAD' && typeof contentLength === 'string' ? contentLength : null;
      const bytes = await readCapped(res.body, cap, declared);
      if (bytes === null) throw new ReadTooLargeError(limit.kind, cap);
      return { statusCode: res.statusCode, headers: res.headers, body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
    } catch (error) {
      const refused =
        error instanceof ReadTooLargeError ? error : signal?.aborted ? new ReadDeadlineError(limit.kind, limit.deadlineMs) : null;
      if (!refused) throw error;
      this.options.onReadRefused?.(refused);
      throw refused;
    }
  }

  /** Closes the connection pool; closing it again is a no-op (a gateway's close may be called twice). */
  close(): Promise<void> {
    this.closing ??= this.pool().then(({ dispatcher }) => dispatcher.close());
    return this.closing;
  }
}
