/**
 * The clients (`mvr verify`, `mvr log`, `mvr mcp`, the key set client) read an answer only up to
 * the limit its kind has and only where they were pointed: a body past the limit (2 GB, sent
 * lazily) is refused unread past it, a redirect is refused and never followed (the API key goes
 * nowhere else), and an answer that drips is abandoned at its total deadline. Each is FETCH_FAILED.
 */
import { createServer, type Socket } from 'node:net';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedGet } from '../../clients/bounded-get.ts';
import { readFileOrUrl } from '../../clients/file-or-url.ts';
import { getFromGateway } from '../../clients/gateway-client.ts';
import { KeySetClient } from '../../clients/key-set-client.ts';
import { AnswerTooLargeError, RedirectRefusedError } from '../../core/errors/errors.ts';
import { READ_LIMITS } from '../../core/limits.ts';
import { removeTempDirs, tempDir } from '../support/project.ts';
import { drippingBody, endlessBody, type StaticOrigin, startStaticOrigin } from '../support/static-origin.ts';

const TWO_GB = 2 * 1024 ** 3;
let origin: StaticOrigin;
/** Where the redirects point: it must never be asked. */
let elsewhere: StaticOrigin;

beforeAll(async () => {
  origin = await startStaticOrigin(await tempDir());
  elsewhere = await startStaticOrigin(await tempDir());
  const redirect = (status: number) => (_req: unknown, res: import('node:http').ServerResponse) =>
    res.writeHead(status, { location: `${elsewhere.url}/x` }).end();
  origin.answer(`/redirect${KEY_SET_PATH}`, redirect(302));
  origin.answer('/v1/verify', redirect(307));
  origin.answer(`/huge${KEY_SET_PATH}`, endlessBody(TWO_GB));
  origin.answer('/log/tile/0/000', endlessBody(TWO_GB, true));
  origin.answer('/drip', drippingBody(20));
});
afterAll(async () => {
  await origin.stop();
  await elsewhere.stop();
  await removeTempDirs();
});

async function rejection(work: Promise<unknown>): Promise<Error & { code?: string }> {
  return work.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: Error) => error,
  );
}

describe('what the clients read', () => {
  it('a redirect is refused, typed, and its target never asked: the key set client and the gateway client', async () => {
    const keySet = await rejection(new KeySetClient({ url: `${origin.url}/redirect` }).get());
    expect(keySet).toBeInstanceOf(RedirectRefusedError);
    expect(keySet.code).toBe('FETCH_FAILED');
    const record = await rejection(getFromGateway(origin.url, 'mvr_test_key', '/v1/verify?domain=shop.example'));
    expect(record).toBeInstanceOf(RedirectRefusedError);
    expect(record.code).toBe('FETCH_FAILED');
    expect(elsewhere.requests).toEqual([]);
  });

  it('an answer past its kind limit is refused, chunked or declared: a 2 GB key set, a 2 GB tile', async () => {
    const keySet = await rejection(new KeySetClient({ url: `${origin.url}/huge` }).get());
    expect(keySet).toBeInstanceOf(AnswerTooLargeError);
    expect((keySet as unknown as AnswerTooLargeError).limitBytes).toBe(READ_LIMITS.keySet.bytes);
    const tile = await rejection(readFileOrUrl(`${origin.url}/log/tile/0/000`));
    expect(tile).toBeInstanceOf(AnswerTooLargeError);
    expect((tile as unknown as AnswerTooLargeError).limitBytes).toBe(READ_LIMITS.tile.bytes);
    expect(tile.code).toBe('FETCH_FAILED');
  });

  it('an answer that drips is abandoned at its total deadline (shortened here), however short the wait between bytes', async () => {
    const dripped = await rejection(boundedGet(`${origin.url}/drip`, { limit: { bytes: 1024 * 1024, deadlineMs: 300 } }));
    expect(dripped.code).toBe('FETCH_FAILED');
    expect(dripped).not.toBeInstanceOf(AnswerTooLargeError);
  });
});

describe('a connection closed under a GET', () => {
  /** A server that closes the first `closing` connections as soon as a request arrives on them (no byte answered), then answers 200. */
  async function closingServer(closing: number): Promise<{ url: string; connections: () => number; stop: () => Promise<void> }> {
    let connections = 0;
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      const n = ++connections;
      socket.once('data', () => {
        if (n <= closing) socket.destroy();
        else socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return {
      url: `http://127.0.0.1:${port}`,
      connections: () => connections,
      stop: () => {
        for (const s of sockets) s.destroy();
        return new Promise((resolve) => server.close(() => resolve()));
      },
    };
  }
  const limit = { bytes: 1024, deadlineMs: 10_000 };

  it('is sent once more on a new connection, as a kept-alive connection the server had just closed would need (RFC 9112, 9.3.1)', async () => {
    const server = await closingServer(1);
    try {
      const res = await boundedGet(`${server.url}/v1/mirror`, { limit });
      expect(res.statusCode).toBe(200);
      expect(res.body.toString()).toBe('ok');
      expect(server.connections()).toBe(2);
    } finally {
      await server.stop();
    }
  });

  it('only once: a server that keeps closing is FETCH_FAILED, naming it', async () => {
    const server = await closingServer(Number.POSITIVE_INFINITY);
    try {
      const error = await rejection(boundedGet(`${server.url}/v1/mirror`, { limit }));
      expect(error.code).toBe('FETCH_FAILED');
      expect(error.message).toContain(`cannot reach ${server.url}`);
      expect(server.connections()).toBe(2);
    } finally {
      await server.stop();
    }
  });
});
