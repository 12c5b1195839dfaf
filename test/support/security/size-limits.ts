/**
 * Size limits of the request head, registered into front-door.test.ts: an oversized query, one
 * huge header, many headers. Node's HTTP parser enforces `http.maxHeaderSize` (16 KiB by
 * default, request line included) before the gateway sees anything: 431 and a closed
 * connection. Below the limit the gateway answers itself (problem documents). Never a 5xx, never
 * a hang, and the gateway keeps serving. (A dozen slow clients hold connections meanwhile.)
 */
import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../gateway.ts';
import { exchange, header, wire } from '../raw-http.ts';
import { expectNo5xx, expectParserRejection, expectRawProblem, type FrontDoor } from './checks.ts';

const KNOWN = 'acme-outdoor.example';
let g: TestGateway;

const auth = () => `Authorization: Bearer ${g.key}`;

async function expectStillServing(): Promise<void> {
  const health = await g.request('/healthz');
  expect(health.status).toBe(200);
  const record = await g.verify(KNOWN);
  expect(record.status).toBe(200);
  expect(record.json.domain).toBe(KNOWN);
}

export function sizeLimitSuite(get: () => FrontDoor): void {
  describe('size limits', () => {
    beforeAll(() => {
      g = get().g;
    });

    describe("Node's defaults, as observed", () => {
      it('http.maxHeaderSize is 16 KiB', () => {
        // Neither the gateway nor this test run changes it (no --max-http-header-size).
        expect(http.maxHeaderSize).toBe(16 * 1024);
      });

      it('a head just under 16 KiB is served, just over it is 431 from the parser', async () => {
        const line = `GET /healthz HTTP/1.1`;
        const under = wire(line, ['Host: 127.0.0.1', `X-Pad: ${'a'.repeat(16_000 - 60)}`, 'Connection: close']);
        expect(under.length).toBeLessThan(16_384);
        const ok = await exchange(g.gateway.port, under, { expect: 1 });
        expect(ok.responses[0]?.status).toBe(200);

        const over = wire(line, ['Host: 127.0.0.1', `X-Pad: ${'a'.repeat(17_000)}`]);
        expectParserRejection(await exchange(g.gateway.port, over), [431]);
      });
    });

    describe('oversized request heads', () => {
      it('a 100 KB query string is refused by the parser (431) and the connection closed', async () => {
        const target = `/v1/verify?domain=${KNOWN}&pad=${'a'.repeat(100 * 1024)}`;
        const x = await exchange(g.gateway.port, wire(`GET ${target} HTTP/1.1`, ['Host: 127.0.0.1', auth()]));
        expectParserRejection(x, [400, 414, 431]);
        expect(x.responses[0]!.status).toBe(431); // what Node 20 answers
        await expectStillServing();
      });

      it('a 100 KB domain value is refused the same way', async () => {
        const x = await exchange(
          g.gateway.port,
          wire(`GET /v1/verify?domain=${'a'.repeat(100 * 1024)}.example HTTP/1.1`, ['Host: 127.0.0.1', auth()]),
        );
        expectParserRejection(x, [400, 414, 431]);
        await expectStillServing();
      });

      it('a 64 KB single header is refused by the parser (431) and the connection closed', async () => {
        const x = await exchange(
          g.gateway.port,
          wire(`GET /v1/verify?domain=${KNOWN} HTTP/1.1`, ['Host: 127.0.0.1', auth(), `X-Big: ${'b'.repeat(64 * 1024)}`]),
        );
        expectParserRejection(x, [400, 431]);
        expect(x.responses[0]!.status).toBe(431);
        await expectStillServing();
      });

      it('a 64 KB Authorization header is refused by the parser, not passed to the key check', async () => {
        const x = await exchange(
          g.gateway.port,
          wire(`GET /v1/verify?domain=${KNOWN} HTTP/1.1`, ['Host: 127.0.0.1', `Authorization: Bearer ${'k'.repeat(64 * 1024)}`]),
        );
        expectParserRejection(x, [400, 431]);
        await expectStillServing();
      });

      it('200 headers of 100 bytes (about 22 KB) are refused by the parser (431)', async () => {
        const many = Array.from({ length: 200 }, (_, i) => `X-Many-${String(i).padStart(3, '0')}: ${'v'.repeat(100)}`);
        const x = await exchange(g.gateway.port, wire(`GET /v1/verify?domain=${KNOWN} HTTP/1.1`, ['Host: 127.0.0.1', auth(), ...many]));
        expectParserRejection(x, [400, 431]);
        await expectStillServing();
      });

      it('200 small headers (about 4 KB) are an ordinary request: Node has no count limit below 2000 (maxHeadersCount)', async () => {
        const many = Array.from({ length: 200 }, (_, i) => `X-Many-${String(i).padStart(3, '0')}: v`);
        const x = await exchange(
          g.gateway.port,
          wire(`GET /v1/verify?domain=${KNOWN} HTTP/1.1`, ['Host: 127.0.0.1', auth(), ...many, 'Connection: close']),
        );
        expect(x.timedOut).toBe(false);
        expect(x.responses.map((r) => r.status)).toEqual([200]);
        expect(JSON.parse(x.responses[0]!.body.toString('utf8')).domain).toBe(KNOWN);
      });

      it('twenty oversized requests at once: every one refused, none hangs, the gateway keeps serving', async () => {
        const big = wire(`GET /v1/verify?domain=${KNOWN}&pad=${'c'.repeat(64 * 1024)} HTTP/1.1`, ['Host: 127.0.0.1', auth()]);
        const all = await Promise.all(Array.from({ length: 20 }, () => exchange(g.gateway.port, big)));
        for (const x of all) {
          expectNo5xx(x);
          expectParserRejection(x, [400, 414, 431]);
        }
        await expectStillServing();
      });
    });

    describe('large but parseable requests are answered by the gateway itself', () => {
      it('a 15 KB domain (under the parser limit) is 400 INVALID_DOMAIN, a problem document', async () => {
        const x = await exchange(
          g.gateway.port,
          wire(`GET /v1/verify?domain=${'a'.repeat(15_000)}.example HTTP/1.1`, ['Host: 127.0.0.1', auth(), 'Connection: close']),
        );
        expect(x.responses.length).toBe(1);
        expectRawProblem(x.responses[0]!, 400, 'INVALID_DOMAIN');
      });

      it('a 15 KB Authorization value is 401 UNAUTHORIZED, a problem document', async () => {
        const x = await exchange(
          g.gateway.port,
          wire(`GET /v1/verify?domain=${KNOWN} HTTP/1.1`, [
            'Host: 127.0.0.1',
            `Authorization: Bearer ${'k'.repeat(15_000)}`,
            'Connection: close',
          ]),
        );
        expect(x.responses.length).toBe(1);
        expectRawProblem(x.responses[0]!, 401, 'UNAUTHORIZED');
        expect(header(x.responses[0]!, 'www-authenticate')).toContain('error="invalid_token"');
      });

      it('a 1 MB body to /mcp is cut off at 64 KiB with 413, without a 5xx, and the gateway keeps serving', async () => {
        const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list","pad":"${'p'.repeat(1024 * 1024)}"}`;
        const x = await exchange(
          g.gateway.port,
          wire(
            'POST /mcp HTTP/1.1',
            [
              'Host: 127.0.0.1',
              auth(),
              'Content-Type: application/json',
              'Accept: application/json, text/event-stream',
              `Content-Length: ${body.length}`,
            ],
            body,
          ),
          { expect: 1, timeoutMs: 10_000 },
        );
        expectNo5xx(x);
        expect(x.responses[0]?.status).toBe(413);
        await expectStillServing();
      });
    });
  });
}
