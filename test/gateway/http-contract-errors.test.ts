/**
 * The error answers of GET /v1/verify and the router: 400 INVALID_DOMAIN naming the query
 * parameter, 404 and 405, and 503; each with its headers and body. (200, request targets and 401
 * are ./http-contract.test.ts.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway, type TestGateway, useGateway } from '../support/gateway.ts';
import { expectNoSecretsInLogs, expectProblem } from '../support/gateway-expect.ts';
import { replaceLiveRecord } from '../support/packs.ts';
import { makeProject } from '../support/project.ts';

const KNOWN = 'acme-outdoor.example';

let g: TestGateway;

useGateway((t) => {
  g = t.g;
});
afterAll(cleanup);

describe('400 INVALID_DOMAIN, naming the query parameter', () => {
  const cases: [string, string][] = [
    ['missing domain', '/v1/verify'],
    ['missing domain, other parameter', '/v1/verify?host=acme-outdoor.example'],
    ['empty', '/v1/verify?domain='],
    ['blank', '/v1/verify?domain=%20%20'],
    ['public suffix co.uk', '/v1/verify?domain=co.uk'],
    ['public suffix github.io (private section)', '/v1/verify?domain=github.io'],
    ['single label', '/v1/verify?domain=localhost'],
    ['IPv4', '/v1/verify?domain=127.0.0.1'],
    ['IPv4, hex spelling', '/v1/verify?domain=0x7f.1'],
    ['IPv6', `/v1/verify?domain=${encodeURIComponent('[::1]')}`],
    ['IPv4 URL', `/v1/verify?domain=${encodeURIComponent('http://10.0.0.1:8080/x')}`],
    ['path traversal, raw', '/v1/verify?domain=../../etc/passwd'],
    ['path traversal, %2F', '/v1/verify?domain=..%2F..%2Fetc'],
    ['path traversal, %2e%2e', '/v1/verify?domain=%2e%2e'],
    ['path traversal, all encoded', '/v1/verify?domain=%2e%2e%2f%2e%2e%2fetc%2fpasswd'],
    ['backslash traversal', `/v1/verify?domain=${encodeURIComponent('..\\..\\etc\\passwd')}`],
    ['NUL byte', '/v1/verify?domain=acme-outdoor.example%00'],
    ['NUL byte alone', '/v1/verify?domain=%00'],
    ['CR LF', '/v1/verify?domain=acme-outdoor.example%0d%0aX-Injected:%201'],
    ['overlong (3000 chars)', `/v1/verify?domain=${'a'.repeat(3000)}`],
    ['hostname over 253 characters', `/v1/verify?domain=${`${'a'.repeat(60)}.`.repeat(5)}example`],
    ['label over 63 characters', `/v1/verify?domain=${'a'.repeat(64)}.example`],
    ['empty label', '/v1/verify?domain=a..example'],
    ['label with a leading hyphen', '/v1/verify?domain=-acme.example'],
    ['underscore', '/v1/verify?domain=acme_outdoor.example'],
    ['whitespace inside', '/v1/verify?domain=acme%20outdoor.example'],
    ['repeated parameter', '/v1/verify?domain=a.example&domain=b.example'],
    ['repeated parameter, same value', '/v1/verify?domain=acme-outdoor.example&domain=acme-outdoor.example'],
    ['malformed percent escape', '/v1/verify?domain=%zz.example'],
  ];
  it.each(cases)('%s', async (_name, path) => {
    const problem = expectProblem(await g.request(path), 400, 'INVALID_DOMAIN');
    expect(problem.detail).toContain('query parameter "domain"');
  });
});

describe('404 and 405', () => {
  it.each([
    '/',
    '/v1',
    '/v1/verify/',
    '/V1/verify',
    '/v2/verify',
    '/nope',
    '/records/current',
    '/keys/api-keys.json',
    '/.well-known/other.json',
  ])('404 NOT_FOUND for %s', async (path) => {
    expectProblem(await g.request(path), 404, 'NOT_FOUND');
    expectProblem(await g.request(path, { key: null }), 404, 'NOT_FOUND');
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('405 METHOD_NOT_ALLOWED with Allow for %s /v1/verify', async (method) => {
    const r = await g.request(`/v1/verify?domain=${KNOWN}`, { method });
    expectProblem(r, 405, 'METHOD_NOT_ALLOWED');
    const allow = r.headers
      .get('allow')!
      .split(',')
      .map((m) => m.trim());
    expect(allow.sort()).toEqual(['GET', 'HEAD']);
  });

  it('405 for a write to the public paths too', async () => {
    for (const path of ['/.well-known/merchant-verify-keys.json', '/schemas/verification/v1', '/openapi.json', '/healthz']) {
      const r = await g.request(path, { method: 'DELETE', key: null });
      expectProblem(r, 405, 'METHOD_NOT_ALLOWED');
      expect(r.headers.get('allow')).toContain('GET');
    }
  });
});

describe('503', () => {
  it('STORE_UNAVAILABLE when there is no build at all (known and never-audited domains alike)', async () => {
    const empty = await makeProject({ build: false });
    const e = await startTestGateway(empty);
    try {
      for (const domain of [KNOWN, 'never-audited-anywhere.example']) {
        const r = await e.verify(domain);
        expectProblem(r, 503, 'STORE_UNAVAILABLE');
        expect(r.text).not.toContain('unverified');
      }
      // The key comes first even then.
      expectProblem(await e.verify(KNOWN, { key: null }), 401, 'UNAUTHORIZED');
      expect(e.logs.some((l) => l.level === 'warn' && /records unavailable/.test(l.msg))).toBe(true);
      expectNoSecretsInLogs(e);
    } finally {
      await e.close();
    }
  });

  it('UNAVAILABLE when a record cannot be assembled (its bytes in its pack are corrupt)', async () => {
    const domain = 'lumen-lighting.example';
    await replaceLiveRecord(g.project, domain, '{"this is": not json');
    const r = await g.verify(domain);
    expectProblem(r, 503, 'UNAVAILABLE');
    expect(r.headers.get('www-authenticate')).toBeNull();
  });
});
