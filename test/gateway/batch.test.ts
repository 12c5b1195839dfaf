/**
 * `POST /v1/verify/batch` on the real gateway, and the MCP tool `verify_merchants`: each record
 * is byte for byte what `GET /v1/verify` answers, in the order sent; whole-request errors in
 * their order (401, 415, 413, 400); each domain counts once against the key's quota.
 */
import { rename } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyRecordNode } from '../../core/crypto/signing.ts';
import { cleanup, type Reply, startTestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { publishedKeySet } from '../support/outputs.ts';
import { makeProject } from '../support/project.ts';
import { poll } from '../support/wait.ts';

afterAll(cleanup);

const GOLD = 'acme-outdoor.example';
describe('POST /v1/verify/batch', async () => {
  const project = await makeProject();
  // A stopped clock: every count below falls in one quota window.
  const frozen = Date.now();
  const g = await startTestGateway(project, { rateLimitPerMinute: 1000, now: () => frozen });
  const post = (
    body: string,
    headers: Record<string, string> = { 'content-type': 'application/json' },
    key: string | null = g.key,
  ): Promise<Reply> => g.request('/v1/verify/batch', { method: 'POST', headers, key, body });

  it('answers in order, each record exactly the bytes GET /v1/verify serves, problems in their place', async () => {
    const sent = ['https://WWW.Acme-Outdoor.example/tents', 'never-audited.example', 'co.uk', GOLD];
    const r = await post(JSON.stringify({ domains: sent }));
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const { results } = r.json as {
      results: { domain: string; record?: Record<string, unknown>; problem?: { code: string; status: number } }[];
    };
    expect(results.map((x) => x.domain)).toEqual(sent);
    const single = (await g.verify(GOLD)).text;
    expect(r.text).toContain(`{"domain":${JSON.stringify(sent[0])},"record":${single}}`);
    expect(r.text).toContain(`{"domain":"${GOLD}","record":${single}}`);
    expect(results[1]!.record).toMatchObject({ domain: 'never-audited.example', status: 'unverified' });
    expect(results[2]!.problem).toMatchObject({ code: 'INVALID_DOMAIN', status: 400 });
    const { keySet } = await publishedKeySet(project);
    expect(verifyRecordNode(results[0]!.record, keySet)).toMatchObject({ valid: true });
  });

  it('whole-request errors: 401 first, then 415, 413, 400 naming the member', async () => {
    expectProblem(await post('not json', { 'content-type': 'text/plain' }, null), 401, 'UNAUTHORIZED');
    expectProblem(await post(JSON.stringify({ domains: [GOLD] }), { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectProblem(await post(JSON.stringify({ domains: ['x'.repeat(70_000)] })), 413, 'PAYLOAD_TOO_LARGE');
    expect(expectProblem(await post('{"domains": ['), 400, 'INVALID_REQUEST').detail).toMatch(/not JSON/);
    expect(expectProblem(await post(JSON.stringify({ domains: [] })), 400, 'INVALID_REQUEST').detail).toMatch(/body member "domains"/);
    expect(expectProblem(await post(JSON.stringify({ domains: Array(101).fill(GOLD) })), 400, 'INVALID_REQUEST').detail).toMatch(
      /body member "domains"/,
    );
    expect(expectProblem(await post(JSON.stringify({ domains: [GOLD, 7] })), 400, 'INVALID_REQUEST').detail).toMatch(
      /body member "domains\[1\]"/,
    );
    expect(expectProblem(await post(JSON.stringify({ domains: [GOLD], extra: 1 })), 400, 'INVALID_REQUEST').detail).toMatch(/"extra"/);
    expectProblem(await g.request('/v1/verify/batch'), 405, 'METHOD_NOT_ALLOWED');
  });

  const remaining = (r: Reply) => {
    const left = /r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1];
    expect(left, 'the RateLimit field').toBeDefined();
    return Number(left);
  };

  it('each domain counts once against the quota, over HTTP and through the MCP tool', async () => {
    const left = remaining(await post(JSON.stringify({ domains: Array(40).fill(GOLD) })));
    expect(remaining(await post(JSON.stringify({ domains: Array(10).fill(GOLD) })))).toBe(left - 10);
    // A tools/call of verify_merchants costs one a domain too; any other MCP message one.
    const call = (name: string, args: unknown) =>
      g.request('/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      });
    const batch = await call('verify_merchants', { domains: Array(7).fill(GOLD) });
    expect(batch.status, batch.text).toBe(200);
    expect(remaining(batch)).toBe(left - 17);
    expect(remaining(await call('verify_merchant', { domain: GOLD }))).toBe(left - 18);
  });

  it('a refused batch costs one request, as a refused single lookup does, and is 429 past the quota', async () => {
    const small = await startTestGateway(project, { rateLimitPerMinute: 3, now: () => frozen });
    try {
      const post = (body: string, type = 'application/json') =>
        small.request('/v1/verify/batch', { method: 'POST', headers: { 'content-type': type }, body });
      const notJson = await post('{"domains": [');
      expectProblem(notJson, 400, 'INVALID_REQUEST');
      expect(remaining(notJson)).toBe(2);
      const wrongType = await post('{}', 'text/plain');
      expectProblem(wrongType, 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(remaining(wrongType)).toBe(1);
      const badDomain = await small.verify('a b');
      expectProblem(badDomain, 400, 'INVALID_DOMAIN');
      expect(remaining(badDomain)).toBe(0);
      expectProblem(await post(JSON.stringify({ domains: [] })), 429, 'RATE_LIMITED');
    } finally {
      await small.close();
    }
  });

  it('a batch bigger than what is left of the quota is 429 and costs nothing: a smaller one still passes', async () => {
    const small = await startTestGateway(project, { rateLimitPerMinute: 30, now: () => frozen });
    try {
      const send = (n: number) =>
        small.request('/v1/verify/batch', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ domains: Array(n).fill(GOLD) }),
        });
      expect(remaining(await send(20))).toBe(10);
      expectProblem(await send(20), 429, 'RATE_LIMITED');
      const last = await send(10);
      expect(last.status).toBe(200);
      expect(remaining(last)).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('a domain string too long to be one is INVALID_DOMAIN in its place, not a refused batch', async () => {
    const r = await post(JSON.stringify({ domains: [`${'a'.repeat(3000)}.example`, GOLD] }));
    expect(r.status).toBe(200);
    expect((r.json as { results: { problem?: unknown }[] }).results[0]!.problem).toMatchObject({ code: 'INVALID_DOMAIN', status: 400 });
  });

  it('the tool verify_merchants gives the same records over MCP', async () => {
    const client = await connectHttpClient(g.url, g.key);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['verify_merchant', 'verify_merchants']));
    // A public suffix, an empty string and a string too long to be a domain: each a problem in its place.
    const domains = [GOLD, 'co.uk', '', `${'a'.repeat(3000)}.example`];
    const result = (await client.callTool({ name: 'verify_merchants', arguments: { domains } })) as unknown as {
      isError?: boolean;
      structuredContent: { results: { domain: string; record?: unknown; problem?: { code: string } }[] };
    };
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.results[0]).toMatchObject({ domain: GOLD, record: JSON.parse((await g.verify(GOLD)).text) });
    // The same problem documents the batch endpoint gives in their places.
    const http = (await post(JSON.stringify({ domains }))).json as { results: unknown[] };
    expect(result.structuredContent.results.slice(1)).toEqual(http.results.slice(1));
    expect(result.structuredContent.results[1]).toMatchObject({
      domain: 'co.uk',
      problem: { code: 'INVALID_DOMAIN', status: 400, type: expect.stringMatching(/\/problems\/invalid-domain$/) },
    });
    for (const r of result.structuredContent.results.slice(2)) expect(r.problem).toMatchObject({ code: 'INVALID_DOMAIN' });
    await client.close();
  });

  it('a store that cannot be read fails the whole batch with 503 STORE_UNAVAILABLE', async () => {
    await rename(project.recordsDir, `${project.recordsDir}.away`);
    // The gateway sees the folder gone at its next refresh: asked until then (bounded), never after a fixed time.
    // Each ask names a domain not asked before, so no answer comes from the cache.
    let asked = 0;
    const { value } = await poll(
      () => post(JSON.stringify({ domains: [`not-cached-${asked++}.example`] })),
      (r) => r.status !== 200,
      { timeoutMs: 5000 },
    );
    expectProblem(value, 503, 'STORE_UNAVAILABLE');
    await rename(`${project.recordsDir}.away`, project.recordsDir);
    await g.close();
  });
});
