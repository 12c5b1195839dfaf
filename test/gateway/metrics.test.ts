/**
 * Prometheus metrics: the real gateway with its metrics listener on a random port, known traffic,
 * then a scrape whose counts must match that traffic exactly. The scrape is also checked by
 * `promtool check metrics` (Debian's prometheus package) when it is installed.
 */
import { spawnSync } from 'node:child_process';
import { bucketHex } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CACHE_LIMITS } from '../../core/limits.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { parseMetrics, type Samples, sampleOf } from '../support/metrics-text.ts';
import { needing, program } from '../support/programs.ts';
import { makeProject } from '../support/project.ts';
import { REDIS, startRedis } from '../support/redis-server.ts';
import { poll } from '../support/wait.ts';

const PROMTOOL = program('promtool', 'prometheus');

const AUDITED = 'acme-outdoor.example';
const NEVER = 'never-audited-metrics.example';
const BAD_KEY = 'mvr_0000000000_notavalidkeynotavalidkeynotavalidkeynotavali';

let g: TestGateway;
let text: string;
let samples: Samples;
let compactBytes: number;

beforeAll(async () => {
  const project = await makeProject();
  // A quota of 6 per key: the 7th keyed request below is refused.
  g = await startTestGateway(project, { metrics: { listen: { host: '127.0.0.1', port: 0 } }, rateLimitPerMinute: 6 });
  // The known traffic: 1 miss then 3 hits, a never-audited domain, 2 bad keys, 1 bad domain, 1 over the quota, 1 unknown path.
  for (let i = 0; i < 4; i++) expect((await g.verify(AUDITED)).status).toBe(200);
  expect((await g.verify(NEVER)).status).toBe(200);
  expect((await g.verify(AUDITED, { key: BAD_KEY })).status).toBe(401);
  expect((await g.verify(AUDITED, { key: null })).status).toBe(401);
  expect((await g.verify('not a domain')).status).toBe(400);
  expect((await g.verify(AUDITED)).status).toBe(429);
  expect((await g.request('/no-such-path')).status).toBe(404);
  // One compact answer asked of the service itself, so the known quota above is unchanged.
  const { lookup } = (await g.gateway.services.records.buildMap()).statement;
  compactBytes = (await g.gateway.services.compact.answer(String(lookup!.bits), bucketHex(0, lookup!.bits!))).bytes.length;
  const res = await fetch(g.gateway.metricsUrl!);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  text = await res.text();
  samples = parseMetrics(text);
});
afterAll(cleanup);

describe('GET /metrics after known traffic', () => {
  it('counts requests by route, method, status and code', () => {
    const requests = (labels: Record<string, string>) =>
      sampleOf(samples, 'mvr_requests_total', { route: '/v1/verify', method: 'GET', ...labels });
    expect(requests({ status: '200' })).toBe(5);
    expect(requests({ status: '401', code: 'UNAUTHORIZED' })).toBe(2);
    expect(requests({ status: '400', code: 'INVALID_DOMAIN' })).toBe(1);
    expect(requests({ status: '429', code: 'RATE_LIMITED' })).toBe(1);
    expect(sampleOf(samples, 'mvr_requests_total', { route: 'unmatched', method: 'GET', status: '404', code: 'NOT_FOUND' })).toBe(1);
    // Every answered /v1/verify request has one duration.
    expect(sampleOf(samples, 'mvr_request_duration_seconds_count', { route: '/v1/verify', method: 'GET' })).toBe(9);
    expect(sampleOf(samples, 'mvr_request_duration_seconds_bucket', { route: '/v1/verify', method: 'GET', le: '+Inf' })).toBe(9);
  });

  it('counts the verified cache, the store reads, the quota refusals and the API key loads', () => {
    expect(sampleOf(samples, 'mvr_verified_cache_hits_total')).toBe(3);
    // The first ask of each domain: the audited one (then cached) and the never-audited one.
    expect(sampleOf(samples, 'mvr_verified_cache_misses_total')).toBe(2);
    expect(sampleOf(samples, 'mvr_store_reads_total', { outcome: 'found' })).toBe(1);
    // The never-audited one is decided by the build's domain map: no store read at all.
    expect(() => sampleOf(samples, 'mvr_store_reads_total', { outcome: 'missing' })).toThrow(/no sample/);
    expect(sampleOf(samples, 'mvr_verified_cache_entries')).toBe(1);
    expect(sampleOf(samples, 'mvr_verified_cache_bytes')).toBeGreaterThan(0);
    expect(sampleOf(samples, 'mvr_verified_cache_limit_bytes')).toBe(1024 * 1024);
    expect(sampleOf(samples, 'mvr_lookup_compact_answers_entries')).toBe(1);
    expect(sampleOf(samples, 'mvr_lookup_compact_answers_bytes')).toBe(compactBytes);
    expect(sampleOf(samples, 'mvr_lookup_compact_answers_limit_bytes')).toBe(CACHE_LIMITS.compactAnswerBytes);
    expect(sampleOf(samples, 'mvr_rate_limit_refusals_total', { policy: 'per-key' })).toBe(1);
    expect(sampleOf(samples, 'mvr_api_key_reloads_total')).toBeGreaterThanOrEqual(1);
    expect(sampleOf(samples, 'mvr_api_key_reload_failures_total')).toBe(0);
    expect(sampleOf(samples, 'mvr_api_keys_live')).toBe(1);
    expect(sampleOf(samples, 'mvr_store_up')).toBe(1);
    // Without --redis there is no Redis state to show.
    expect(text).not.toContain('mvr_redis_up');
  });

  it('shows the live build and its age, and the process metrics', async () => {
    const health = (await g.request('/healthz', { key: null })).json;
    const build = health.records.build as string;
    expect(sampleOf(samples, 'mvr_build_info', { build })).toBe(1);
    expect(sampleOf(samples, 'mvr_build_age_seconds', { build })).toBeGreaterThan(0);
    expect(sampleOf(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(sampleOf(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('never carries a key or its secret', () => {
    expect(text).not.toContain(g.key);
    expect(text).not.toContain(g.key.split('_').slice(2).join('_')); // the secret part may itself hold '_'
    expect(text).not.toContain(BAD_KEY);
  });

  it('answers only GET and HEAD /metrics', async () => {
    const base = g.gateway.metricsUrl!;
    expect((await fetch(base.replace(/\/metrics$/, '/other'))).status).toBe(404);
    const post = await fetch(base, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(base, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it.skipIf(!PROMTOOL.path)(needing(PROMTOOL, 'is clean under promtool check metrics'), () => {
    const check = spawnSync(PROMTOOL.path!, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${check.stdout}${check.stderr}`.trim()).toBe('');
    expect(check.status).toBe(0);
  });
});

describe('without --metrics-port', () => {
  it('serves no metrics', async () => {
    const plain = await startTestGateway(g.project);
    expect(plain.gateway.metricsUrl).toBeNull();
    expect(plain.gateway.services.metrics).toBeNull();
    await plain.close();
  });
});

describe.skipIf(!REDIS.path)(needing(REDIS, 'with --redis (real redis-server)'), () => {
  it('shows whether Redis is up, and the failed key reloads while it is down', async () => {
    const redis = await startRedis();
    const withRedis = await startTestGateway(g.project, { redisUrl: redis.url, metrics: { listen: { host: '127.0.0.1', port: 0 } } });
    const scrape = async () => parseMetrics(await (await fetch(withRedis.gateway.metricsUrl!)).text());
    try {
      expect(sampleOf(await scrape(), 'mvr_redis_up')).toBe(1);
      expect(sampleOf(await scrape(), 'mvr_api_key_reload_failures_total')).toBe(0);
      await redis.stop();
      const { value } = await poll(
        scrape,
        (s) => sampleOf(s, 'mvr_redis_up') === 0 && sampleOf(s, 'mvr_api_key_reload_failures_total') > 0,
      );
      expect(sampleOf(value, 'mvr_redis_up')).toBe(0);
    } finally {
      await withRedis.close();
      await redis.stop();
    }
  });
});
