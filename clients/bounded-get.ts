import type { Dispatcher } from 'undici';
import { readCapped } from '#shared';
import { AnswerTooLargeError, FetchFailedError, RedirectRefusedError } from '../core/errors/errors.ts';

/** An answer read whole, within its limits. */
export interface BoundedAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * One GET of the clients (`mvr verify`, `mvr log`, `mvr mcp`, the key set client) over undici's
 * pool: the body read by the one capped reader only up to `limit.bytes` (AnswerTooLargeError past it), the whole request ended at
 * `limit.deadlineMs`, `timeoutMs` at most between two chunks, and a redirect refused
 * (RedirectRefusedError): a client sends its key and trusts its answer only where it was pointed.
 * A GET on a connection closed before any answer is tried once more (a kept-alive one the server had just
 * closed; a POST is not sent twice); any other failure to reach the server is FETCH_FAILED.
 */
export function boundedGet(url: string, options: BoundedOptions): Promise<BoundedAnswer> {
  return boundedRequest(url, options);
}

/** A POST of `body` with {@link boundedGet}'s limits (an encapsulated request to an Oblivious HTTP relay). */
export function boundedPost(url: string, body: Uint8Array, options: BoundedOptions): Promise<BoundedAnswer> {
  return boundedRequest(url, options, body);
}

interface BoundedOptions {
  limit: { bytes: number; deadlineMs: number };
  timeoutMs?: number;
  headers?: Record<string, string>;
  dispatcher?: Dispatcher;
}

async function boundedRequest(url: string, options: BoundedOptions, body?: Uint8Array): Promise<BoundedAnswer> {
  const { limit, timeoutMs = 10_000 } = options;
  // undici is loaded on the first request, not with the CLI: `mvr verify --file` never fetches.
  const { request } = await import('undici');
  const signal = AbortSignal.timeout(limit.deadlineMs);
  const where = new URL(url).origin;
  const send = () =>
    request(url, {
      ...(body === undefined ? {} : { method: 'POST' as const, body }),
      headers: options.headers,
      dispatcher: options.dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal,
    });
  try {
    const res = await send().catch((error: { code?: string }) => {
      // A kept-alive connection the server closed (its idle deadline) just as this GET went out on it, before any
      // byte of an answer: a GET may be sent again (RFC 9112, 9.3.1). Once, on a new connection, within the deadline.
      if (error?.code !== 'UND_ERR_SOCKET' || signal.aborted || body !== undefined) throw error;
      return send();
    });
    // The one redirect rule (packages/shared's reader): never followed, here refused.
    if (res.statusCode >= 300 && res.statusCode < 400 && res.statusCode !== 304) {
      res.body.on('error', () => undefined).destroy();
      throw new RedirectRefusedError(url, res.statusCode);
    }
    const contentLength = res.headers['content-length'];
    const bytes = await readCapped(res.body, limit.bytes, typeof contentLength === 'string' ? contentLength : null);
    if (bytes === null) throw new AnswerTooLargeError(url, limit.bytes);
    return { statusCode: res.statusCode, headers: res.headers, body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  } catch (error) {
    if (error instanceof FetchFailedError) throw error;
    if (signal.aborted) throw new FetchFailedError(`${where} took longer than ${limit.deadlineMs} ms to answer ${url}`);
    throw new FetchFailedError(`cannot reach ${where}: ${(error as Error).message}`);
  }
}
