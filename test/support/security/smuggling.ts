/**
 * Registered into front-door.test.ts (one gateway for the HTTP front door).
 *
 * Request-smuggling-shaped requests, written byte for byte over raw TCP: conflicting or malformed
 * framing (Content-Length with Transfer-Encoding, two lengths, odd codings, obs-fold, whitespace
 * before the colon, bare LF/CR, bad chunks) must be refused with 400 and a closed connection
 * before the gateway sees them (Node's llhttp does this); well-framed bodies on a GET, and
 * pipelined requests, must give exactly one response per request (smuggling-framed.ts). Never a 5xx.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../gateway.ts';
import { exchange } from '../raw-http.ts';
import { expectNo5xx, expectParserRejection, type FrontDoor } from './checks.ts';
import { H, KNOWN, loggedSinceOf, markLog, SMUGGLED } from './smuggling-log.ts';

let g: TestGateway;

const loggedSince = (from: number, count: number) => loggedSinceOf(g, from, count);

export function smugglingSuite(get: () => FrontDoor): void {
  describe('request smuggling', () => {
    beforeAll(() => {
      g = get().g;
    });

    describe('refused by the parser: 400, connection closed, the gateway never sees a request', () => {
      const auth = () => `Authorization: Bearer ${g.key}\r\n`;
      const cases: [string, () => string][] = [
        [
          'Content-Length and Transfer-Encoding (smuggled GET after the chunk terminator)',
          () => `POST /mcp HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
        ],
        [
          'Transfer-Encoding before Content-Length',
          () => `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n${SMUGGLED}`,
        ],
        [
          'Content-Length and Transfer-Encoding on a keyed GET /v1/verify',
          () =>
            `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${auth()}Content-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
        ],
        [
          'two Content-Length headers with different values',
          () => `POST /mcp HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!${SMUGGLED}`,
        ],
        [
          'two Content-Length headers with the same value (Node refuses these too)',
          () => `POST /mcp HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello`,
        ],
        ['a Content-Length list "5, 6"', () => `POST /mcp HTTP/1.1\r\n${H}Content-Length: 5, 6\r\n\r\nhello!`],
        [
          'Transfer-Encoding: chunked, identity',
          () => `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n${SMUGGLED}`,
        ],
        ['Transfer-Encoding: identity', () => `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding: identity\r\n\r\n0\r\n\r\n`],
        ['Transfer-Encoding: xchunked', () => `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n`],
        [
          'Transfer-Encoding: chunked given twice',
          () => `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
        ],
        ['an obs-fold continuation line', () => `GET /healthz HTTP/1.1\r\n${H}X-Folded: a\r\n  folded\r\n\r\n`],
        [
          'Transfer-Encoding continued by obs-fold',
          () => `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
        ],
        [
          'Authorization continued by obs-fold',
          () => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}Authorization: Bearer\r\n ${g.key}\r\n\r\n`,
        ],
        ['a space before the colon of Content-Length', () => `GET /healthz HTTP/1.1\r\n${H}Content-Length : 36\r\n\r\n${SMUGGLED}`],
        [
          'a space before the colon of Transfer-Encoding',
          () => `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n`,
        ],
        ['a tab before the colon', () => `GET /healthz HTTP/1.1\r\n${H}Content-Length\t: 5\r\n\r\nhello`],
        [
          'a space before the colon of Authorization (valid key)',
          () => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}Authorization : Bearer ${g.key}\r\n\r\n`,
        ],
        ['a space inside a header name', () => `GET /healthz HTTP/1.1\r\n${H}X Forwarded: z\r\n\r\n`],
        ['an empty header name', () => `GET /healthz HTTP/1.1\r\n${H}: z\r\n\r\n`],
        ['bare LF line endings throughout', () => `GET /healthz HTTP/1.1\nHost: 127.0.0.1\n\n`],
        ['a bare LF ending one header line', () => `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\nX-A: b\r\n\r\n`],
        ['a bare LF ending the head', () => `GET /healthz HTTP/1.1\r\n${H}\n`],
        ['bare CR line endings', () => `GET /healthz HTTP/1.1\rHost: 127.0.0.1\r\r`],
        ['a bare CR inside a header value', () => `GET /healthz HTTP/1.1\r\n${H}X-A: a\rb\r\n\r\n`],
        ['a NUL inside a header value', () => `GET /healthz HTTP/1.1\r\n${H}X-A: a\u0000b\r\n\r\n`],
        ['Content-Length: +5', () => `POST /mcp HTTP/1.1\r\n${H}Content-Length: +5\r\n\r\nhello`],
        ['Content-Length: 0x5', () => `POST /mcp HTTP/1.1\r\n${H}Content-Length: 0x5\r\n\r\nhello`],
        ['Content-Length: -1', () => `POST /mcp HTTP/1.1\r\n${H}Content-Length: -1\r\n\r\nhello`],
        ['a Content-Length that overflows 64 bits', () => `POST /mcp HTTP/1.1\r\n${H}Content-Length: 99999999999999999999999\r\n\r\nhello`],
        ['a chunk size that is not hex', () => `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5x\r\nhello\r\n0\r\n\r\n`],
        [
          'a chunk size that overflows',
          () => `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n`,
        ],
        ['chunk data not followed by CRLF', () => `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhelloX0\r\n\r\n`],
        [
          'a chunk extension ended by a bare LF',
          () => `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5;a=b\nhello\r\n0\r\n\r\n`,
        ],
        [
          'HTTP/1.0 with both Transfer-Encoding and Content-Length',
          () => `POST /mcp HTTP/1.0\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n`,
        ],
        ['a lower-case method', () => `get /healthz HTTP/1.1\r\n${H}\r\n`],
        ['a tab in the request line', () => `GET\t/healthz HTTP/1.1\r\n${H}\r\n`],
      ];

      let before = 0;
      beforeAll(async () => {
        // Requests of earlier suites logged first: everything answered before a marker request is.
        before = (await markLog(g)) + 1;
      });

      it.each(cases)('%s', async (_name, make) => {
        const x = await exchange(g.gateway.port, make());
        expectNo5xx(x);
        expectParserRejection(x, [400]);
      });

      it('none of them reached the gateway (no request was logged), and it keeps serving', async () => {
        expect(await loggedSince(before, 0)).toEqual([]);
        const r = await g.verify(KNOWN);
        expect(r.status).toBe(200);
        expect(r.json.domain).toBe(KNOWN);
      });
    });
  });
}
