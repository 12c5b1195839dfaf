/**
 * Registered into front-door.test.ts (one gateway for the HTTP front door).
 *
 * Request-smuggling-shaped requests, written byte for byte over raw TCP: conflicting or malformed
 * framing (Content-Length with Transfer-Encoding, two lengths, odd codings, obs-fold, whitespace
 * before the colon, bare LF/CR, bad chunks) must be refused with 400 and a closed connection
 * before the gateway sees them (Node's llhttp does this); well-framed bodies on a GET, and
 * pipelined requests, must give exactly one response per request. Never a 5xx.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { LogLine } from '../../gateway/context.ts';
import type { TestGateway } from '../support/gateway.ts';
import { poll, sleep } from '../support/wait.ts';
import { expectNo5xx, expectParserRejection, expectRawProblem, type FrontDoor } from './checks.ts';
import { exchange, header } from './raw-http.ts';

const KNOWN = 'acme-outdoor.example';
const H = 'Host: 127.0.0.1\r\n';
const SMUGGLED = `GET /smuggled HTTP/1.1\r\n${H}\r\n`;

let g: TestGateway;

const requestLogs = (): LogLine[] => g.logs.filter((l) => l.msg === 'request');

/** Every request the gateway logged after `from` (once `count` are there, or after a short wait). */
async function loggedSince(from: number, count: number): Promise<LogLine[]> {
  await poll(
    async () => requestLogs().slice(from),
    (lines) => lines.length >= count,
    { timeoutMs: count === 0 ? 0 : 2000 },
  );
  if (count === 0) await new Promise((r) => setTimeout(r, 50));
  return requestLogs().slice(from);
}

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
        // Let requests still in flight from earlier suites finish logging first: no new line for 100 ms (bounded).
        const { value } = await poll(
          async () => {
            const seen = requestLogs().length;
            await sleep(100);
            return { seen, now: requestLogs().length };
          },
          ({ seen, now }) => seen === now,
          { timeoutMs: 5000, intervalMs: 0 },
        );
        before = value.now;
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

    describe('well framed: exactly one response per request', () => {
      it('a GET with a body followed by a pipelined GET: two responses, in order, nothing else', async () => {
        const before = requestLogs().length;
        const data = `GET /healthz HTTP/1.1\r\n${H}Content-Length: 10\r\n\r\n0123456789GET /openapi.json HTTP/1.1\r\n${H}\r\n`;
        const x = await exchange(g.gateway.port, data, { expect: 2, graceMs: 300 });
        expectNo5xx(x);
        expect(x.responses.map((r) => r.status)).toEqual([200, 200]);
        expect(JSON.parse(x.responses[0]!.body.toString('utf8')).status).toBe('ok');
        expect(JSON.parse(x.responses[1]!.body.toString('utf8')).openapi).toBe('3.1.0');
        expect(x.rest.length).toBe(0);
        const logged = await loggedSince(before, 2);
        expect(logged.map((l) => l.path)).toEqual(['/healthz', '/openapi.json']);
      });

      it('a GET whose Content-Length body is itself a request: one response, the body is never run', async () => {
        const before = requestLogs().length;
        const data = `GET /healthz HTTP/1.1\r\n${H}Content-Length: ${SMUGGLED.length}\r\n\r\n${SMUGGLED}`;
        const x = await exchange(g.gateway.port, data, { expect: 1, graceMs: 400 });
        expectNo5xx(x);
        expect(x.responses.map((r) => r.status)).toEqual([200]);
        expect(x.rest.length).toBe(0);
        const logged = await loggedSince(before, 1);
        expect(logged.map((l) => l.path)).toEqual(['/healthz']);
      });

      it("a keyed GET /v1/verify whose body holds another verify request: one response, the first domain's record", async () => {
        const before = requestLogs().length;
        const inner = `GET /v1/verify?domain=gadget-hub.example HTTP/1.1\r\n${H}Authorization: Bearer ${g.key}\r\n\r\n`;
        const data = `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}Authorization: Bearer ${g.key}\r\nContent-Length: ${inner.length}\r\n\r\n${inner}`;
        const x = await exchange(g.gateway.port, data, { expect: 1, graceMs: 400 });
        expectNo5xx(x);
        expect(x.responses.length).toBe(1);
        expect(JSON.parse(x.responses[0]!.body.toString('utf8')).domain).toBe(KNOWN);
        const logged = await loggedSince(before, 1);
        expect(logged.map((l) => l.domain)).toEqual([KNOWN]);
      });

      it('a GET with a chunked body followed by a pipelined request: two responses', async () => {
        const data = `GET /healthz HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /openapi.json HTTP/1.1\r\n${H}\r\n`;
        const x = await exchange(g.gateway.port, data, { expect: 2, graceMs: 300 });
        expectNo5xx(x);
        expect(x.responses.map((r) => r.status)).toEqual([200, 200]);
        expect(x.rest.length).toBe(0);
      });

      it('three pipelined requests, one of them a HEAD: three responses, the HEAD without a body', async () => {
        const data = `GET /healthz HTTP/1.1\r\n${H}\r\nHEAD /openapi.json HTTP/1.1\r\n${H}\r\nGET /nope HTTP/1.1\r\n${H}Connection: close\r\n\r\n`;
        const x = await exchange(g.gateway.port, data, { heads: [false, true, false] });
        expectNo5xx(x);
        expect(x.responses.map((r) => r.status)).toEqual([200, 200, 404]);
        expect(x.responses[1]!.body.length).toBe(0);
        expect(Number(header(x.responses[1]!, 'content-length'))).toBeGreaterThan(0);
        expectRawProblem(x.responses[2]!, 404, 'NOT_FOUND');
        expect(x.rest.length).toBe(0);
        expect(x.closed).toBe(true);
      });

      it('HTTP/1.0 with Transfer-Encoding: chunked: one response and the connection closed (RFC 9112 6.1)', async () => {
        const x = await exchange(g.gateway.port, `POST /mcp HTTP/1.0\r\n${H}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n`);
        expectNo5xx(x);
        expect(x.timedOut).toBe(false);
        expect(x.responses.length).toBe(1);
        expectRawProblem(x.responses[0]!, 401, 'UNAUTHORIZED');
        expect(header(x.responses[0]!, 'connection')).toBe('close');
        expect(x.closed).toBe(true);
      });

      it('bytes after an HTTP/1.0 request (which closes the connection) are refused: a single 400, never a second response', async () => {
        for (const first of [
          `POST /mcp HTTP/1.0\r\n${H}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
          `GET /healthz HTTP/1.0\r\n${H}\r\n`,
        ]) {
          const x = await exchange(g.gateway.port, first + SMUGGLED);
          expectNo5xx(x);
          expectParserRejection(x, [400]);
        }
      });

      it('an /mcp body cut off at 64 KiB (413) is still body to the parser: a request hidden at its end is never run', async () => {
        const before = requestLogs().length;
        const body = `${'a'.repeat(70_000)}${SMUGGLED}`;
        const auth = `Authorization: Bearer ${g.key}\r\nContent-Type: application/json\r\n`;
        const next = `GET /healthz HTTP/1.1\r\n${H}Connection: close\r\n\r\n`;
        const byLength = `POST /mcp HTTP/1.1\r\n${H}${auth}Content-Length: ${body.length}\r\n\r\n${body}`;
        const chunked = `POST /mcp HTTP/1.1\r\n${H}${auth}Transfer-Encoding: chunked\r\n\r\n${(70_000).toString(16)}\r\n${'a'.repeat(70_000)}\r\n${SMUGGLED.length.toString(16)}\r\n${SMUGGLED}\r\n0\r\n\r\n`;
        for (const first of [byLength, chunked]) {
          const x = await exchange(g.gateway.port, first + next, { timeoutMs: 10_000 });
          expectNo5xx(x);
          expect(x.timedOut).toBe(false);
          expect(x.responses.map((r) => r.status)).toEqual([413, 200]);
          expect(x.rest.length).toBe(0);
        }
        const logged = await loggedSince(before, 4);
        expect(logged.map((l) => `${l.method} ${l.path} ${l.status}`)).toEqual([
          'POST /mcp 413',
          'GET /healthz 200',
          'POST /mcp 413',
          'GET /healthz 200',
        ]);
      });

      it('Transfer-Encoding: gzip, chunked is framed as chunked: one response', async () => {
        const x = await exchange(g.gateway.port, `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`, {
          expect: 2,
          graceMs: 300,
        });
        expectNo5xx(x);
        // The request, then the pipelined GET /smuggled as a request of its own (404): never a response too many.
        expect(x.responses.map((r) => r.status)).toEqual([401, 404]);
      });
    });
  });
}
