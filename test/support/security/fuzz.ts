/**
 * Registered into front-door.test.ts (one gateway for the HTTP front door).
 *
 * A fast-check fuzz of the whole HTTP surface over raw TCP (so `..`, `%2e%2e` and `//` reach the
 * server as written): random method, target, query, Authorization and extra headers, sometimes a
 * body. Whatever the request:
 * - never a 5xx (the store is available here, so not even a 503), never a hang, one response;
 * - every error is an RFC 9457 problem document (`application/problem+json`, exactly
 *   {type,title,status,detail,code}, `Cache-Control: no-store`), 401 with WWW-Authenticate,
 *   405 with Allow;
 * - HEAD answers carry no body.
 * Two documented exceptions, which are not the gateway's own answers: a method token Node's
 * parser does not know is a bare 400 from llhttp (connection closed), and CONNECT is closed by
 * Node without an answer. JSON-RPC errors of `POST /mcp` behind a valid key are JSON-RPC
 * documents (the MCP transport's contract), checked as such.
 */

import http from 'node:http';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../../access/api-keys.ts';
import { addApiKey, type TestGateway } from '../gateway.ts';
import { type Exchange, exchange, header } from '../raw-http.ts';
import { poll } from '../wait.ts';
import { expectRawProblem, type FrontDoor } from './checks.ts';
import { keys, type Req, request } from './fuzz-requests.ts';

let g: TestGateway;
let revoked: string;
const KNOWN_METHODS = new Set(http.METHODS);

// ---------------------------------------------------------------------------------------------
// The check

function targetOf(r: Req): string {
  if (r.path === '*') return '*';
  const origin = r.path + (r.query === undefined ? '' : `?${r.query}`);
  return r.absoluteForm ? `http://127.0.0.1:${g.gateway.port}${origin}` : origin;
}

function wireOf(r: Req): string {
  const lines = [`${r.method} ${targetOf(r)} HTTP/1.1`, 'Host: 127.0.0.1'];
  if (r.authorization.kind !== 'none') {
    lines.push(`Authorization: ${r.authorization.value}`);
    // Checked against the logs afterwards; short random values are no credential (and would match anything).
    if (r.authorization.value.length >= 16) g.sentAuthorizations.add(r.authorization.value);
  }
  for (const [name, value] of r.headers) lines.push(`${name}: ${value}`);
  if (r.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(r.body)}`);
  lines.push('Connection: close');
  return `${lines.join('\r\n')}\r\n\r\n${r.body ?? ''}`;
}

const statuses = new Map<string, number>();

function check(r: Req, x: Exchange): void {
  const label = `${r.method} ${targetOf(r)}`;
  expect(x.timedOut, `${label}: answered in time`).toBe(false);
  expect(x.closed, `${label}: closed after Connection: close`).toBe(true);
  for (const res of [...x.responses, ...x.interim]) expect(res.status, `${label}: ${res.head}`).toBeLessThan(500);
  expect(x.rest.length, `${label}: no stray bytes (a HEAD body, a second response)`).toBe(0);

  if (r.method === 'CONNECT') {
    // Node has no 'connect' listener here: the socket is closed without an answer (or a bare 4xx).
    expect(x.responses.length).toBeLessThanOrEqual(1);
    statuses.set('CONNECT', (statuses.get('CONNECT') ?? 0) + 1);
    return;
  }
  expect(x.responses.length, label).toBe(1);
  const res = x.responses[0]!;
  statuses.set(String(res.status), (statuses.get(String(res.status)) ?? 0) + 1);

  if (!KNOWN_METHODS.has(r.method)) {
    // llhttp does not know the method: refused before the gateway, a bare 400 (or, should the
    // gateway ever answer parser errors itself, a 400 problem document).
    expect(res.status, label).toBe(400);
    expect(header(res, 'connection'), label).toBe('close');
    if (res.body.length > 0) expectRawProblem(res, 400);
    return;
  }

  const isHead = r.method === 'HEAD';
  if (isHead) expect(res.body.length, `${label}: HEAD has no body`).toBe(0);
  if ((res.status >= 200 && res.status < 300) || res.status === 304) return;

  const path = r.path.split('?')[0];
  if (path === '/mcp' && r.method === 'POST' && r.authorization.kind === 'valid' && header(res, 'content-type') === 'application/json') {
    // Behind a valid key, MCP transport errors are JSON-RPC error objects.
    const doc = JSON.parse(res.body.toString('utf8')) as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } };
    expect(doc.jsonrpc, label).toBe('2.0');
    expect(typeof doc.error?.code, label).toBe('number');
    expect(typeof doc.error?.message, label).toBe('string');
    return;
  }
  expectRawProblem(res, res.status, undefined, { head: isHead });
  if (!isHead) {
    const doc = JSON.parse(res.body.toString('utf8')) as { code: string };
    if (res.status === 401) expect(doc.code).toBe('UNAUTHORIZED');
    if (res.status === 404) expect(doc.code).toBe('NOT_FOUND');
    if (res.status === 405) expect(doc.code).toBe('METHOD_NOT_ALLOWED');
  }
  if (res.status === 401) {
    const www = header(res, 'www-authenticate')!;
    // A Bearer token that was sent (and is not live) is an invalid_token; anything else is a plain challenge.
    const sentBearer = r.authorization.kind !== 'none' && /^bearer[ \t]+\S+[ \t]*$/i.test(r.authorization.value);
    if (sentBearer) expect(www, label).toContain('error="invalid_token"');
    else expect(www, label).toBe('Bearer realm="merchant-verify"');
  }
  if (res.status === 405) expect(header(res, 'allow'), label).toMatch(/^(GET, HEAD|POST)$/);
}

export function fuzzSuite(get: () => FrontDoor): void {
  describe('fuzz of the HTTP surface', () => {
    beforeAll(async () => {
      g = get().g;
      const extra = await addApiKey(g, 'fuzz-revoked');
      revoked = extra.key;
      keys.valid = g.key;
      keys.revoked = revoked;
      // Live first: a 401 before the gateway has even loaded the new key would prove nothing, and
      // a load of the file in between would then accept the key until the next one.
      await poll(
        () => g.verify('acme-outdoor.example', { key: revoked }),
        (r) => r.status === 200,
        { timeoutMs: 3000 },
      );
      await revokeApiKey(g.project.apiKeysFile, extra.id);
      // Wait until the gateway has seen the revocation (it re-reads the key file every 100 ms).
      await poll(
        () => g.verify('acme-outdoor.example', { key: revoked }),
        (r) => r.status === 401,
        { timeoutMs: 3000 },
      );
    });

    describe('HTTP surface fuzz', () => {
      it('never a 5xx; errors are problem documents with the right headers; HEAD has no body', async () => {
        await fc.assert(
          fc.asyncProperty(request, async (r) => {
            const x = await exchange(g.gateway.port, wireOf(r), { heads: [r.method === 'HEAD'], timeoutMs: 5000 });
            check(r, x);
          }),
          { numRuns: Number(process.env.MVR_FUZZ_RUNS ?? 200) },
        );
        console.info('fuzz statuses', JSON.stringify([...statuses]));
        // The run covered the interesting answers (not only 404s).
        for (const status of ['200', '400', '401', '404', '405'])
          expect(statuses.get(status) ?? 0, `status ${status} seen`).toBeGreaterThan(0);
        // The gateway is still healthy and logged no unhandled error.
        expect((await g.request('/healthz')).status).toBe(200);
        expect(g.logs.filter((l) => l.level === 'error')).toEqual([]);
      });
    });

    describe('answers Node gives itself (unknown methods, CONNECT, Expect), and TRACE', () => {
      const send = (head: string, heads: boolean[] = [false]) => exchange(g.gateway.port, `${head}\r\n\r\n`, { heads });

      it('an unknown method token is a bare 400 from the parser; CONNECT is closed without an answer', async () => {
        const unknown = await send(`FROB /v1/verify HTTP/1.1\r\nHost: 127.0.0.1`);
        expect(unknown.responses.map((r) => r.status)).toEqual([400]);
        expect(unknown.closed).toBe(true);
        const connect = await send(`CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1`);
        expect(connect.responses).toEqual([]);
        expect(connect.closed).toBe(true);
      });

      it("Expect: 100-continue gets 100 Continue, then the gateway's own answer", async () => {
        const x = await send(`GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nConnection: close`);
        expect(x.interim.map((r) => r.status)).toEqual([100]);
        expect(x.responses.length).toBe(1);
        expectRawProblem(x.responses[0]!, 404, 'NOT_FOUND');
      });

      it('another Expect is a 417 from Node: no 5xx, never the record', async () => {
        const x = await send(
          `GET /v1/verify?domain=acme-outdoor.example HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${g.key}\r\nExpect: something-else\r\nConnection: close`,
        );
        expect(x.timedOut).toBe(false);
        expect(x.responses.map((r) => r.status)).toEqual([417]);
        const r = x.responses[0]!;
        expect(r.body.toString('utf8')).not.toContain('"signature"');
        // Node 20 sends no body; a problem document would be better (see the report).
        if (r.body.length > 0) expectRawProblem(r, 417);
      });

      it('TRACE is a 405 problem document and echoes nothing of the request', async () => {
        const x = await send(
          `TRACE /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${g.key}\r\nCookie: session=s3cr3t-cookie\r\nConnection: close`,
        );
        expect(x.responses.length).toBe(1);
        expectRawProblem(x.responses[0]!, 405, 'METHOD_NOT_ALLOWED');
        const text = x.responses[0]!.head + x.responses[0]!.body.toString('latin1');
        expect(text).not.toContain(g.key);
        expect(text).not.toContain('s3cr3t-cookie');
      });
    });
  });
}
