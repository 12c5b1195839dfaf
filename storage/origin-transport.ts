import type { Dispatcher, request } from 'undici';

export interface OriginTransportOptions {
  /** Connections kept per origin. */
  connections?: number;
  /** Per-attempt limit on waiting for headers and for the body. */
  timeoutMs?: number;
  /** Retries of a failed attempt (network error, 5xx), with exponential backoff. */
  retries?: number;
}

export interface OriginAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * How the gateway and `mvr publish` talk to a records origin (a plain HTTP origin or S3): one
 * keep-alive pool, a timeout on every attempt, and retries with backoff on network errors and
 * 5xx answers (undici's RetryAgent). Requests are whole: bodies are read into memory, records
 * being small.
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
   * One request, its answer read whole. With `maxBytes`, a body larger than that is refused
   * ({@link BodyTooLargeError}) as soon as its length is known or read past, so a huge object costs
   * no more memory than the cap.
   */
  async send(
    url: string,
    init: { method?: 'GET' | 'PUT' | 'HEAD'; headers?: Record<string, string>; body?: Buffer; maxBytes?: number } = {},
  ): Promise<OriginAnswer> {
    const { dispatcher, request } = await this.pool();
    const timeoutMs = this.options.timeoutMs ?? 2000;
    const res = await request(url, {
      method: init.method ?? 'GET',
      headers: init.headers,
      body: init.body,
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const max = init.maxBytes;
    if (max === undefined) return { statusCode: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
    const tooLarge = () => {
      res.body.destroy();
      return new BodyTooLargeError(`${url} answered more than ${max} bytes`);
    };
    if (Number(res.headers['content-length'] ?? 0) > max) throw tooLarge();
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of res.body) {
      length += (chunk as Buffer).length;
      if (length > max) throw tooLarge();
      chunks.push(chunk as Buffer);
    }
    return { statusCode: res.statusCode, headers: res.headers, body: Buffer.concat(chunks, length) };
  }

  /** Closes the connection pool; closing it again is a no-op (a gateway's close may be called twice). */
  close(): Promise<void> {
    this.closing ??= this.pool().then(({ dispatcher }) => dispatcher.close());
    return this.closing;
  }
}

/** An answer larger than the caller's `maxBytes`: not read past the cap. */
export class BodyTooLargeError extends Error {}
