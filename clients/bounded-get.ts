import type { Dispatcher } from 'undici';
import { AnswerTooLargeError, FetchFailedError, RedirectRefusedError } from '../core/errors.ts';

/** An answer read whole, within its limits. */
export interface BoundedAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * One GET of the clients (`mvr verify`, `mvr log`, `mvr mcp`, the key set client): the body read
 * only up to `limit.bytes` (AnswerTooLargeError past it), the whole request ended at
 * `limit.deadlineMs`, `timeoutMs` at most between two chunks, and a redirect refused
 * (RedirectRefusedError): a client sends its key and trusts its answer only where it was pointed.
 * Any other failure to reach the server is FETCH_FAILED.
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
  try {
    const res = await request(url, {
      ...(body === undefined ? {} : { method: 'POST' as const, body }),
      headers: options.headers,
      dispatcher: options.dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal,
    });
    if (res.statusCode >= 300 && res.statusCode < 400 && res.statusCode !== 304) {
      res.body.on('error', () => undefined).destroy();
      throw new RedirectRefusedError(url, res.statusCode);
    }
    if (Number(res.headers['content-length'] ?? 0) > limit.bytes) {
      res.body.on('error', () => undefined).destroy();
      throw new AnswerTooLargeError(url, limit.bytes);
    }
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of res.body) {
      length += (chunk as Buffer).length;
      if (length > limit.bytes) throw new AnswerTooLargeError(url, limit.bytes);
      chunks.push(chunk as Buffer);
    }
    return { statusCode: res.statusCode, headers: res.headers, body: Buffer.concat(chunks, length) };
  } catch (error) {
    if (error instanceof FetchFailedError) throw error;
    if (signal.aborted) throw new FetchFailedError(`${where} took longer than ${limit.deadlineMs} ms to answer ${url}`);
    throw new FetchFailedError(`cannot reach ${where}: ${(error as Error).message}`);
  }
}
