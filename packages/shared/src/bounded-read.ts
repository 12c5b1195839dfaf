/**
 * The one capped reader: every body merchant-verify reads from a store, an origin, a gateway or a
 * witness goes through {@link readCapped} (its size limit), and every request made with the
 * platform's `fetch` (Node 20+, browsers, Deno, Bun) through {@link readBounded}, which adds the
 * total deadline and the one redirect rule. Limits come from the one table (limits.ts).
 *
 * The redirect rule: a redirect is never followed. It is an answer like any other (its status, a
 * body read as an error message), which the caller refuses: an API key is sent, and an answer
 * trusted, only where the caller pointed (a gateway, an origin, a witness it was given).
 */
import type { ReadLimit } from './limits.ts';

/** An answer read whole within its limits. */
export interface BoundedAnswer {
  /** The HTTP status; a redirect's is 3xx (0 in a browser, which hides it: `redirected` says so). */
  status: number;
  /** True for a redirect, which was not followed. */
  redirected: boolean;
  headers: Headers;
  bytes: Uint8Array;
}

/** Why an answer was not read: past its size, past its deadline, or no answer at all (the platform's error). */
export type BoundedFailure =
  | { failure: 'tooLarge'; limitBytes: number; status: number }
  | { failure: 'deadline'; deadlineMs: number }
  | { failure: 'unreachable'; error: unknown };

/** A body as undici's `request` (an async iterable of chunks) or `fetch` (a ReadableStream) gives it. */
export type Body = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | null | undefined;

/**
 * A body read whole, or null as soon as it is known to be over `cap` bytes: from its declared
 * length before a byte is read, else from the bytes read so far. Either way the rest is not read
 * (the stream is cancelled), so a body that never ends costs at most `cap` bytes of memory.
 */
export async function readCapped(body: Body, cap: number, declaredLength?: string | null): Promise<Uint8Array | null> {
  if (body === null || body === undefined) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let length = 0;
  const over = (size: number) => size > cap;
  if (declaredLength != null && over(Number(declaredLength))) {
    await cancel(body);
    return null;
  }
  if (body instanceof ReadableStream) {
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      length += value.byteLength;
      if (over(length)) {
        await reader.cancel().catch(() => undefined);
        return null;
      }
      chunks.push(value);
    }
  } else {
    // Leaving the loop early ends the iterator (undici destroys the body): nothing more is read.
    for await (const chunk of body) {
      length += chunk.byteLength;
      if (over(length)) return null;
      chunks.push(chunk);
    }
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** A Node stream (undici's `request` body), told apart without importing `node:`. */
interface Destroyable {
  destroy(): void;
  on(event: 'error', listener: () => void): unknown;
}

/** Stops a body unread; its reporting the abort is the point, not a failure. */
async function cancel(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void> {
  if (body instanceof ReadableStream) await body.cancel().catch(() => undefined);
  // An iterator never started has nothing to end: a Node stream is destroyed itself.
  else if (typeof (body as Partial<Destroyable>).destroy === 'function') {
    const stream = body as unknown as Destroyable;
    stream.on('error', () => undefined);
    stream.destroy();
  } else await body[Symbol.asyncIterator]().return?.();
}

export interface BoundedInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The fetch to use (default the global one): a test's, one with a proxy, or undici's with a pool. */
  fetch?: typeof globalThis.fetch;
  /** The most an answer other than 2xx (an error message, a redirect) may have, if lower than the limit's bytes. */
  errorBytes?: number;
}

/**
 * One HTTP request and its answer, read whole within `limit`: the whole exchange ends at
 * `limit.deadlineMs`, the body is read only up to `limit.bytes` ({@link readCapped}), and a
 * redirect is returned unfollowed. Never throws for the network: a failure is returned, for the
 * caller to name in its own error.
 */
export async function readBounded(url: string, limit: ReadLimit, init: BoundedInit = {}): Promise<BoundedAnswer | BoundedFailure> {
  const signal = AbortSignal.timeout(limit.deadlineMs);
  try {
    const res = await (init.fetch ?? globalThis.fetch)(url, {
      method: init.method ?? 'GET',
      headers: init.headers,
      body: init.body as BodyInit | undefined,
      redirect: 'manual',
      signal,
    });
    const cap = res.ok ? limit.bytes : Math.min(limit.bytes, init.errorBytes ?? limit.bytes);
    const declared = init.method === 'HEAD' ? null : res.headers.get('content-length');
    const bytes = await readCapped(res.body, cap, declared);
    if (bytes === null) return { failure: 'tooLarge', limitBytes: cap, status: res.status };
    const redirected = res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400 && res.status !== 304);
    return { status: res.status, redirected, headers: res.headers, bytes };
  } catch (error) {
    if (signal.aborted) return { failure: 'deadline', deadlineMs: limit.deadlineMs };
    return { failure: 'unreachable', error };
  }
}
