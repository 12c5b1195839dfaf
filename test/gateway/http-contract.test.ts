/**
 * The HTTP contract of GET /v1/verify and the router: 200, request targets and 401, with their
 * headers and body. (400, 404, 405 and 503: ./http-contract-errors.test.ts; the access log of
 * these requests: ./request-log.test.ts; every route against the served OpenAPI document:
 * ./openapi-contract.test.ts.)
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../access/api-keys.ts';
import { addApiKey, cleanup, RECORD_CACHE_CONTROL, rawRequest, type TestGateway, useGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { liveRecordBytes } from '../support/packs.ts';
import { poll } from '../support/wait.ts';

const KNOWN = 'acme-outdoor.example';
/** A well-formed key (`mvr_<id>_<secret>`) that was never issued. */
const forgedKey = () => `mvr_${randomBytes(5).toString('hex')}_${randomBytes(32).toString('base64url')}`;

let g: TestGateway;
let knownBytes: Buffer;

useGateway(async (t) => {
  g = t.g;
  knownBytes = await liveRecordBytes(t.project, KNOWN);
});
afterAll(cleanup);

describe('200: the record', () => {
  it('serves the exact file bytes with the record headers and a strong ETag', async () => {
    const r = await g.verify(KNOWN);
    expect(r.status).toBe(200);
    expect(r.bytes.equals(knownBytes)).toBe(true);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('cache-control')).toBe(RECORD_CACHE_CONTROL);
    expect(r.headers.get('vary')).toBe('Authorization');
    expect(r.headers.get('etag')).toMatch(/^"[^"\s]+"$/); // strong: no W/ prefix
    expect(r.headers.get('content-length')).toBe(String(knownBytes.length));
    expect(r.json.domain).toBe(KNOWN);
  });

  it('gives the same ETag for the same bytes, and 304 with no body for If-None-Match', async () => {
    const first = await g.verify(KNOWN);
    const etag = first.headers.get('etag')!;
    expect((await g.verify(KNOWN)).headers.get('etag')).toBe(etag);

    const r = await g.verify(KNOWN, { headers: { 'if-none-match': etag } });
    expect(r.status).toBe(304);
    expect(r.bytes.length).toBe(0);
    expect(r.headers.get('etag')).toBe(etag);
    expect(r.headers.get('cache-control')).toBe(RECORD_CACHE_CONTROL);
    expect(r.headers.get('vary')).toBe('Authorization');

    // A list holding the tag, and the weak form (If-None-Match compares weakly), match too.
    expect((await g.verify(KNOWN, { headers: { 'if-none-match': `"nope", ${etag}` } })).status).toBe(304);
    expect((await g.verify(KNOWN, { headers: { 'if-none-match': `W/${etag}` } })).status).toBe(304);
    // Another tag does not.
    const other = await g.verify(KNOWN, { headers: { 'if-none-match': '"something-else"' } });
    expect(other.status).toBe(200);
    expect(other.bytes.equals(knownBytes)).toBe(true);
  });

  it('answers HEAD with the GET headers, Content-Length and an empty body', async () => {
    const get = await g.verify(KNOWN);
    const head = await g.verify(KNOWN, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.bytes.length).toBe(0);
    for (const name of ['content-type', 'cache-control', 'vary', 'etag']) {
      expect(head.headers.get(name), name).toBe(get.headers.get(name));
    }
    expect(head.headers.get('content-length')).toBe(String(knownBytes.length));
  });
});

describe('request targets', () => {
  it('origin-form with a raw NUL or traversal in the path is a 404, never a file', async () => {
    for (const target of ['/v1/verify/..', '/..%2f..%2fetc/passwd', '//v1/verify?domain=acme-outdoor.example', '/v1/%00verify']) {
      const r = await rawRequest(g, `GET ${target} HTTP/1.1`, { Authorization: `Bearer ${g.key}` });
      expect(r.status, target).toBe(404);
      expect(r.head).toMatch(/content-type: application\/problem\+json/i);
    }
  });

  it('accepts the absolute-form of the request target (RFC 9112 3.2.2)', async () => {
    const r = await rawRequest(g, `GET ${g.url}/v1/verify?domain=${KNOWN} HTTP/1.1`, { Authorization: `Bearer ${g.key}` });
    expect(r.status).toBe(200);
    expect(r.body.equals(knownBytes)).toBe(true);
  });

  it('resolves dot segments in neither form of the target: /x/../v1/verify is a 404 both ways', async () => {
    for (const target of [`/x/../v1/verify?domain=${KNOWN}`, `${g.url}/x/../v1/verify?domain=${KNOWN}`]) {
      const r = await rawRequest(g, `GET ${target} HTTP/1.1`, { Authorization: `Bearer ${g.key}` });
      expect(r.status, target).toBe(404);
      expect(JSON.parse(r.body.toString('utf8')).code, target).toBe('NOT_FOUND');
    }
    const bare = await rawRequest(g, `GET ${g.url}?domain=${KNOWN} HTTP/1.1`, { Authorization: `Bearer ${g.key}` });
    expect(JSON.parse(bare.body.toString('utf8')).detail).toBe('no resource at /');
  });
});

describe('401: the API key comes first', () => {
  it('missing key: WWW-Authenticate Bearer realm, without an error attribute', async () => {
    const r = await g.verify(KNOWN, { key: null });
    expectProblem(r, 401, 'UNAUTHORIZED');
    const challenge = r.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer realm="[^"]+"$/);
    expect(challenge).not.toContain('error=');
  });

  it('wrong key (well-formed but never issued, or garbage): error="invalid_token"', async () => {
    for (const key of [forgedKey(), `garbage-${randomBytes(12).toString('hex')}`, `${g.key.slice(0, -4)}AAAA`]) {
      const r = await g.verify(KNOWN, { key });
      expectProblem(r, 401, 'UNAUTHORIZED');
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+", error="invalid_token"/);
    }
  });

  it('revoked key: error="invalid_token"', async () => {
    const extra = await addApiKey(g, 'to-revoke');
    await poll(
      () => g.verify(KNOWN, { key: extra.key }),
      (r) => r.status === 200,
      { timeoutMs: 2000 },
    );
    await revokeApiKey(g.project.apiKeysFile, extra.id);
    const { value: r } = await poll(
      () => g.verify(KNOWN, { key: extra.key }),
      (r) => r.status === 401,
      { timeoutMs: 2000 },
    );
    expectProblem(r, 401, 'UNAUTHORIZED');
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+", error="invalid_token"/);
  });

  it('is checked before the domain: bad key + bad domain is 401, not 400', async () => {
    expectProblem(await g.request('/v1/verify?domain=..%2F..%2Fetc', { key: forgedKey() }), 401, 'UNAUTHORIZED');
    expectProblem(await g.request('/v1/verify?domain=co.uk', { key: null }), 401, 'UNAUTHORIZED');
    expectProblem(await g.request('/v1/verify', { key: null }), 401, 'UNAUTHORIZED');
    expectProblem(
      await g.request('/v1/verify?domain=a.example&domain=b.example', { authorization: 'Basic dXNlcjpwYXNz' }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('takes the Bearer scheme case-insensitively', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const r = await g.verify(KNOWN, { authorization: `${scheme} ${g.key}` });
      expect(r.status, scheme).toBe(200);
      expect(r.bytes.equals(knownBytes)).toBe(true);
    }
  });

  it('refuses any other scheme, even carrying the right key', async () => {
    for (const authorization of [
      `Basic ${Buffer.from(`user:${g.key}`).toString('base64')}`,
      `Token ${g.key}`,
      g.key,
      `Bearer`,
      `Bearer ${g.key} extra`,
    ]) {
      const r = await g.verify(KNOWN, { authorization });
      expectProblem(r, 401, 'UNAUTHORIZED');
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+"/);
    }
  });
});
