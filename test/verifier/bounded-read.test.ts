/**
 * The one capped reader (packages/shared/src/bounded-read.ts) against a real local server: a body
 * past its cap is refused unread (by its declared length, or as it arrives), a redirect is an
 * answer and its target is never asked, a silent server fails at the deadline; and the verifier's
 * `gatewaySource` reads through it: a redirected key set is FETCH_FAILED, not followed.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FetchFailedError, gatewaySource } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBounded, readCapped } from '#shared';

const asked: string[] = [];
const routes: Record<string, (res: ServerResponse) => void> = {
  '/small': (res) => res.end('hello'),
  '/declared-large': (res) => res.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000)),
  // Chunked, no length: refused as the bytes arrive.
  '/endless': (res) => {
    res.writeHead(200);
    const write = () => (res.write('x'.repeat(1024)) ? setImmediate(write) : res.once('drain', write));
    res.once('close', () => res.removeAllListeners('drain'));
    write();
  },
  '/moved': (res) => res.writeHead(302, { location: '/target' }).end('moved'),
  '/.well-known/merchant-verify-keys.json': (res) => res.writeHead(301, { location: '/target' }).end(),
  '/target': (res) => res.end('{"keys":[]}'),
  '/silent': () => undefined,
};
const server = createServer((req, res) => {
  asked.push(req.url ?? '');
  routes[req.url ?? '']?.(res);
});
let base: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('readBounded', () => {
  it('reads an answer within its limits', async () => {
    const answer = await readBounded(`${base}/small`, { bytes: 1024, deadlineMs: 5_000 });
    expect(answer).toMatchObject({ status: 200, redirected: false });
    expect(new TextDecoder().decode((answer as { bytes: Uint8Array }).bytes)).toBe('hello');
  });

  it('refuses a body past its cap, declared or streamed', async () => {
    expect(await readBounded(`${base}/declared-large`, { bytes: 1024, deadlineMs: 5_000 })).toEqual({
      failure: 'tooLarge',
      limitBytes: 1024,
      status: 200,
    });
    expect(await readBounded(`${base}/endless`, { bytes: 64 * 1024, deadlineMs: 5_000 })).toMatchObject({ failure: 'tooLarge' });
  });

  it('returns a redirect unfollowed: its target is never asked', async () => {
    asked.length = 0;
    const answer = await readBounded(`${base}/moved`, { bytes: 1024, deadlineMs: 5_000 });
    expect(answer).toMatchObject({ status: 302, redirected: true });
    expect(asked).toEqual(['/moved']);
  });

  it('fails at the deadline when no answer comes', async () => {
    expect(await readBounded(`${base}/silent`, { bytes: 1024, deadlineMs: 100 })).toEqual({ failure: 'deadline', deadlineMs: 100 });
  });

  it('readCapped reads an async iterable as undici gives a body, and stops past the cap', async () => {
    async function* chunks() {
      for (let i = 0; i < 10; i++) yield new Uint8Array(100);
    }
    expect((await readCapped(chunks(), 1000))?.byteLength).toBe(1000);
    expect(await readCapped(chunks(), 999)).toBeNull();
    expect(await readCapped(chunks(), 10_000, '20000')).toBeNull();
  });
});

describe("the verifier's gatewaySource reads through it", () => {
  it('a redirected key set is FETCH_FAILED naming the redirect, and the target is never asked', async () => {
    asked.length = 0;
    const error = await gatewaySource({ baseUrl: base })
      .keySet()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchFailedError);
    expect((error as FetchFailedError).message).toMatch(/301 .*not followed/);
    expect(asked).toEqual(['/.well-known/merchant-verify-keys.json']);
  });
});
