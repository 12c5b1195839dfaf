import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedWindowLimiter, rateLimitField, rateLimitHeaders } from '../../access/rate-limit.ts';
import { addApiKey, cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { makeProject, type Project } from '../support/project.ts';

describe('FixedWindowLimiter', () => {
  it('allows the quota per window, then refuses until the window resets', () => {
    let now = 0;
    const limiter = new FixedWindowLimiter('per-key', 3, 60, 100, () => now);
    expect([1, 2, 3, 4].map(() => limiter.take('a').allowed)).toEqual([true, true, true, false]);
    expect(limiter.take('b').allowed).toBe(true); // callers are counted apart
    now = 30_000;
    expect(limiter.take('a')).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 30 });
    now = 60_000;
    expect(limiter.take('a')).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 60 });
  });

  it('counts at the time a request gives (the gateway reads its clock once per request), its own clock otherwise', () => {
    const limiter = new FixedWindowLimiter('per-key', 1, 60, 100, () => 0);
    expect(limiter.take('a', 1, 5_000)).toMatchObject({ allowed: true, resetSeconds: 60 });
    expect(limiter.take('a', 1, 50_000)).toMatchObject({ allowed: false, resetSeconds: 15 });
    // A new window from the request's time, though the limiter's own clock still says 0.
    expect(limiter.take('a', 1, 65_000)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 60 });
    expect(limiter.take('b')).toMatchObject({ allowed: true, resetSeconds: 60 });
  });

  it('stays within maxCallers however many callers it sees', () => {
    const limiter = new FixedWindowLimiter('unauthenticated', 1, 60, 100, () => 0);
    for (let i = 0; i < 10_000; i++) limiter.take(`caller-${i}`);
    expect((limiter as unknown as { windows: Map<string, unknown> }).windows.size).toBeLessThanOrEqual(100);
  });
});

describe('the RateLimit fields', () => {
  it('are the structured fields of the draft, policy and remaining quota', () => {
    const d = new FixedWindowLimiter('per-key', 6000, 60, 100, () => 0).take('a');
    expect(rateLimitHeaders(d)).toEqual({ 'ratelimit-policy': '"per-key";q=6000;w=60', ratelimit: '"per-key";r=5999;t=60' });
    const big = new FixedWindowLimiter('per-key', 1_000_000_000, 60, 100, () => 0).take('a');
    expect(rateLimitField(big)).toBe('"per-key";r=999999999;t=60');
  });
});

describe('rate limits on the gateway', () => {
  let project: Project;
  let t: TestGateway;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    project = await makeProject();
    t = await startTestGateway(project, { rateLimitPerMinute: 5, unauthenticatedPerMinute: 3 });
    for (const label of ['other', 'keyed', 'mcp']) keys[label] = (await addApiKey(t, label)).key;
    await t.gateway.services.apiKeys.refresh(); // resolves once every key added before it is loaded
  });
  afterAll(cleanup);

  it('counts each key apart, sends the IETF RateLimit fields, and answers 429 RATE_LIMITED with Retry-After', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await t.verify('acme-outdoor.example');
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-policy')).toBe('"per-key";q=5;w=60');
      expect(r.headers.get('ratelimit')).toMatch(new RegExp(`^"per-key";r=${4 - i};t=\\d+$`));
    }
    const limited = await t.verify('acme-outdoor.example');
    expectProblem(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit')).toMatch(/^"per-key";r=0;t=\d+$/);
    // Another key is not affected by the first one's use.
    expect((await t.verify('acme-outdoor.example', { key: keys.other! })).status).toBe(200);
  });

  it('turns a flood without a valid key into 429s per address, without touching keyed callers', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await t.verify('acme-outdoor.example', { key: null })).status);
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.slice(3).every((s) => s === 429)).toBe(true);
    expect((await t.verify('acme-outdoor.example', { key: 'mvr_0000000000_notavalidkeynotavalidkeynotavalidkeynotavali' })).status).toBe(
      429,
    );
    expect((await t.verify('acme-outdoor.example', { key: keys.keyed! })).status).toBe(200);
  });

  it('applies to POST /mcp as well', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${t.url}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${keys.mcp!}` }, body });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 5).every((s) => s === 200)).toBe(true);
    expect(statuses[5]).toBe(429);
  });
});
