/**
 * Registered into front-door.test.ts (one gateway for the HTTP front door), after smuggling.ts and
 * under the same heading: well-framed requests written byte for byte over raw TCP (bodies on a GET,
 * pipelined requests, HTTP/1.0, a body cut off at 64 KiB) must give exactly one response per
 * request, and a request hidden in a body is never run. Never a 5xx.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../gateway.ts';
import { exchange, header } from '../raw-http.ts';
import { expectNo5xx, expectParserRejection, expectRawProblem, type FrontDoor } from './checks.ts';
import { H, KNOWN, loggedSinceOf, requestLogsOf, SMUGGLED } from './smuggling-log.ts';

let g: TestGateway;

const requestLogs = () => requestLogsOf(g);
const loggedSince = (from: number, count: number) => loggedSinceOf(g, from, count);

export function smugglingFramedSuite(get: () => FrontDoor): void {
  describe('request smuggling', () => {
    beforeAll(() => {
      g = get().g;
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
