/**
 * The prefix lookup answers the gateway keeps (service/prefix-lookups.ts, CACHE_LIMITS in
 * core/limits.ts), on the real gateway over real builds: bounded by bytes (each answer counted at
 * the size its build signed), the least recently used dropped first once the bound is passed, and
 * every answer of a build dropped once another build is live. Asserts what the cache reports,
 * through the service and the metrics scrape, never the process's memory.
 */
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { CACHE_LIMITS } from '../../core/limits.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { parseMetrics, sampleOf } from '../support/metrics-text.ts';
import { build, makeProject } from '../support/project.ts';

afterAll(cleanup);

const months = ['2026-10-20', '2026-11-01'].map((d) => Date.parse(`${d}T00:00:00Z`));
const prefixOf = (domain: string, length: number) => createHash('sha256').update(domain).digest('hex').slice(0, length);

describe('the prefix lookup answers kept', async () => {
  const project = await makeProject({ build: false });
  await build(project, { now: months[0]!, keep: 2 });
  // A first gateway only to learn the build's answer size and prefix length.
  const probe = await startTestGateway(project, { rateLimitPerMinute: 10_000 });
  const first = (await probe.request(`/v1/lookup/${prefixOf('a.example', 1)}`)).json.statement.lookup as {
    prefix_length: number;
    answer_bytes: number;
  };
  await probe.close();
  const { prefix_length: length, answer_bytes: answerBytes } = first;
  // Room for two answers, not three.
  const limit = 2 * answerBytes + Math.floor(answerBytes / 2);
  const g = await startTestGateway(project, {
    rateLimitPerMinute: 10_000,
    lookupAnswerBytes: limit,
    metrics: { listen: { host: '127.0.0.1', port: 0 } },
  });
  const prefixes = Array.from({ length: 16 ** length }, (_, i) => i.toString(16).padStart(length, '0')).slice(0, 3);
  const ask = async (prefix: string) => {
    const r = await g.request(`/v1/lookup/${prefix}`);
    expect(r.status).toBe(200);
    return r.json as { statement: { build: string } };
  };
  const stats = () => g.gateway.services.lookups.stats();

  it('defaults to the bound in the limits table', () => {
    expect(probe.gateway.services.lookups.stats().limitBytes).toBe(CACHE_LIMITS.prefixAnswerBytes);
  });

  it('keeps answers up to its byte bound, then drops the least recently used', async () => {
    await ask(prefixes[0]!);
    await ask(prefixes[1]!);
    expect(stats()).toMatchObject({ answers: 2, bytes: 2 * answerBytes, limitBytes: limit });
    await ask(prefixes[0]!); // a hit: no new answer, and prefixes[1] is now the least recently used
    expect(stats()).toMatchObject({ answers: 2, bytes: 2 * answerBytes });
    await ask(prefixes[2]!);
    expect(stats()).toMatchObject({ answers: 2, bytes: 2 * answerBytes });
    const samples = parseMetrics(await (await fetch(g.gateway.metricsUrl!)).text());
    expect(sampleOf(samples, 'mvr_lookup_answers_entries')).toBe(2);
    expect(sampleOf(samples, 'mvr_lookup_answers_bytes')).toBe(2 * answerBytes);
  });

  it('drops every answer of a build once another build is live', async () => {
    const before = stats().build;
    expect(before).not.toBeNull();
    await build(project, { now: months[1]!, keep: 2 });
    await g.gateway.services.records.refresh();
    const answer = await ask(prefixes[0]!);
    expect(answer.statement.build).not.toBe(before);
    expect(stats()).toMatchObject({ build: answer.statement.build, answers: 1, bytes: answerBytes });
  });
});
