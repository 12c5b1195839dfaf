/**
 * The gateway's edge, as a client on a raw socket meets it: a request head with two Host or two
 * Authorization fields is refused before any route (400 INVALID_REQUEST naming the header), every
 * JSON and problem answer says `nosniff`, and a client that hangs up mid-body is an info line in
 * the log, not an error with a stack.
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { cleanup, type Reply, startTestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { makeProject } from '../support/project.ts';
import { exchange, type RawResponse } from '../support/raw-http.ts';
import { poll } from '../support/wait.ts';

afterAll(cleanup);

const GOLD = 'acme-outdoor.example';

describe('the HTTP edge', async () => {
  const project = await makeProject();
  const g = await startTestGateway(project);
  const raw = async (head: string[], body = ''): Promise<RawResponse> => {
    const x = await exchange(g.gateway.port, `${[...head, 'Connection: close', '', ''].join('\r\n')}${body}`);
    expect(x.responses.length, head[0]).toBe(1);
    return x.responses[0]!;
  };
  const problemOf = (r: RawResponse) => JSON.parse(r.body.toString('utf8')) as { code: string; detail: string; status: number };
  const bearer = `Authorization: Bearer ${g.key}`;
  g.sentAuthorizations.add(`Bearer ${g.key}`);

  it('answers a request with one Host and one Authorization (the control case)', async () => {
    const r = await raw([`GET /v1/verify?domain=${GOLD} HTTP/1.1`, 'Host: 127.0.0.1', bearer]);
    expect(r.status).toBe(200);
  });

  it('refuses more than one Host, or a Host that is not a host, with 400 INVALID_REQUEST naming Host (RFC 9112 3.2)', async () => {
    for (const hosts of [
      ['Host: 127.0.0.1', 'Host: evil.example'],
      ['Host: 127.0.0.1', 'host: 127.0.0.1'],
      ['Host: a.example, b.example'],
      ['Host: user@a.example'],
    ]) {
      for (const target of [`/v1/verify?domain=${GOLD}`, '/healthz', '/.well-known/merchant-verify-keys.json']) {
        const r = await raw([`GET ${target} HTTP/1.1`, ...hosts, bearer]);
        expect(r.status, `${hosts.join(' | ')} ${target}`).toBe(400);
        expect(r.headers.get('content-type')).toEqual(['application/problem+json']);
        expect(r.headers.get('x-content-type-options')).toEqual(['nosniff']);
        expect(problemOf(r)).toMatchObject({ code: 'INVALID_REQUEST', detail: expect.stringMatching(/header "Host"/) });
      }
    }
  });

  it('refuses a repeated Authorization with 400 INVALID_REQUEST naming it, whichever key comes first', async () => {
    for (const auths of [
      [bearer, 'Authorization: Bearer not-a-key'],
      ['Authorization: Bearer not-a-key', bearer],
      [bearer, bearer],
    ]) {
      const r = await raw([`GET /v1/verify?domain=${GOLD} HTTP/1.1`, 'Host: 127.0.0.1', ...auths]);
      expect(r.status, auths.join(' | ')).toBe(400);
      expect(problemOf(r)).toMatchObject({
        code: 'INVALID_REQUEST',
        detail: expect.stringMatching(/header "Authorization" is sent 2 times/),
      });
    }
    const batch = await raw(
      ['POST /v1/verify/batch HTTP/1.1', 'Host: 127.0.0.1', bearer, bearer, 'Content-Type: application/json', 'Content-Length: 22'],
      '{"domains":["a.example"]}'.slice(0, 22),
    );
    expect(problemOf(batch)).toMatchObject({ code: 'INVALID_REQUEST' });
  });

  it('marks every JSON and problem answer nosniff: record, 400, 401, 404, 405, batch, MCP, health, key set', async () => {
    const mcpInit = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const answers: [string, Reply, number][] = [
      ['record', await g.verify(GOLD), 200],
      ['never audited', await g.verify('never-audited.example'), 200],
      ['400', await g.verify('co.uk'), 400],
      ['401', await g.verify(GOLD, { key: null }), 401],
      ['404', await g.request('/nowhere'), 404],
      ['405', await g.request('/v1/verify', { method: 'DELETE' }), 405],
      [
        'batch',
        await g.request('/v1/verify/batch', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ domains: [GOLD, 'co.uk'] }),
        }),
        200,
      ],
      ['batch 415', await g.request('/v1/verify/batch', { method: 'POST', body: '{}' }), 415],
      [
        'mcp',
        await g.request('/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: mcpInit,
        }),
        200,
      ],
      ['mcp parse error', await g.request('/mcp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }), 400],
      ['health', await g.request('/healthz', { key: null }), 200],
      ['key set', await g.request('/.well-known/merchant-verify-keys.json', { key: null }), 200],
    ];
    for (const [what, r, status] of answers) {
      expect(r.status, what).toBe(status);
      expect(r.headers.get('content-type'), what).toMatch(/^application\/([a-z-]+\+)?json/);
      expect(r.headers.get('x-content-type-options'), what).toBe('nosniff');
    }
  });

  it('marks the verify page and its script nosniff (the script only runs as the JavaScript it says it is)', async () => {
    for (const path of ['/verify', '/verify/app.js']) {
      const r = await g.request(path, { key: null });
      expect(r.status, path).toBe(200);
      expect(r.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
  });

  it('marks the 503 of a store that is not there nosniff too', async () => {
    const down = await startTestGateway(project, { records: { url: join(project.recordsDir, 'not-there') } });
    const r = await down.verify(GOLD);
    expectProblem(r, 503, 'STORE_UNAVAILABLE');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    await down.close();
  });

  it('logs a client that hangs up mid-body (batch, MCP) at info, without a stack, and goes on serving', async () => {
    // h3 prints an error it takes as unhandled to the console, stack and all.
    const printed = vi.spyOn(console, 'error');
    for (const path of ['/v1/verify/batch', '/mcp']) {
      const before = g.logs.length;
      await new Promise<void>((resolve, reject) => {
        const socket = connect(g.gateway.port, '127.0.0.1', () => {
          socket.write(
            [
              `POST ${path} HTTP/1.1`,
              'Host: 127.0.0.1',
              bearer,
              'Content-Type: application/json',
              'Content-Length: 5000',
              '',
              '{"domains":["acme',
            ].join('\r\n'),
          );
          // Long enough for the gateway to be reading the body, then gone.
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 100);
        });
        socket.on('error', reject);
      });
      const { value: line } = await poll(
        async () => g.logs.slice(before).find((l) => l.msg === 'client closed the connection before the request was complete'),
        (l) => l !== undefined,
        { timeoutMs: 3000 },
      );
      expect(line, path).toMatchObject({ level: 'info', method: 'POST', path });
      const since = g.logs.slice(before);
      expect(
        since.filter((l) => l.level === 'error'),
        path,
      ).toEqual([]);
      expect(JSON.stringify(since), path).not.toMatch(/ at |stack|unhandled/);
    }
    expect(printed).not.toHaveBeenCalled();
    printed.mockRestore();
    expect((await g.verify(GOLD)).status).toBe(200);
  });
});
