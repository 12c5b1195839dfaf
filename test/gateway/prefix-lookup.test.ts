/**
 * `GET /v1/lookup/{prefix}`: private lookups against the real gateway over the sample build. Every
 * audited domain and some never-audited ones get, from the answer for their prefix, the verdict
 * the plain lookup gives (a second gateway answers the plain ones, so the first never hears a
 * domain); every answer of the build is one size; the access log and the metrics scrape of the
 * private gateway hold none of the domains asked; a prefix of the wrong length is 400 INVALID_PREFIX.
 */
import { createHash } from 'node:crypto';
import { isNeverAudited, verifyAnswer, verifyPrefixAnswer } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { publishedKeySet, readCurrentRecords } from '../support/outputs.ts';
import { makeProject } from '../support/project.ts';

afterAll(cleanup);

const NEVER = ['never-audited-private.example', 'another-unknown-shop.example', 'zz-nothing-here.example'];
const prefixOf = (domain: string, length: number) => createHash('sha256').update(domain).digest('hex').slice(0, length);

describe('GET /v1/lookup/{prefix}', async () => {
  const project = await makeProject();
  const audited = [...(await readCurrentRecords(project.recordsDir)).keys()];
  const asked = [...audited, ...NEVER];
  const { keySet } = await publishedKeySet(project);
  const privateGateway = await startTestGateway(project, {
    rateLimitPerMinute: 10_000,
    metrics: { listen: { host: '127.0.0.1', port: 0 } },
  });
  const plainGateway = await startTestGateway(project, { rateLimitPerMinute: 10_000 });
  const first = await privateGateway.request(`/v1/lookup/${prefixOf(NEVER[0]!, 1)}`);
  const length = first.json.statement.lookup.prefix_length as number;

  it('gives every domain the verdict of the plain lookup, and never hears a domain', async () => {
    const sizes = new Set<number>();
    for (const domain of asked) {
      const r = await privateGateway.request(`/v1/lookup/${prefixOf(domain, length)}`);
      expect(r.status).toBe(200);
      sizes.add(r.bytes.length);
      const privately = verifyPrefixAnswer({ domain, answer: r.json, keySet });
      const plain = (await plainGateway.verify(domain)).json;
      const absence = isNeverAudited(plain) ? { proof: (await plainGateway.request(`/v1/absence?domain=${domain}`)).json } : undefined;
      const openly = verifyAnswer({ answer: plain, keySet, domain, ...(absence ? { absence } : {}) });
      expect({ domain, code: privately.code }).toEqual({ domain, code: openly.code });
      if (openly.code === null) expect(privately.answer).toEqual(plain);
    }
    expect(NEVER.every((d) => !audited.includes(d))).toBe(true);
    // One size for every answer of the build: its size does not tell the prefix.
    expect(sizes.size).toBe(1);
    const scrape = await (await fetch(privateGateway.gateway.metricsUrl!)).text();
    const logged = privateGateway.logs.map((l) => JSON.stringify(l)).join('\n');
    expect(logged).toContain('/v1/lookup/');
    expect(scrape).toContain('route="/v1/lookup/**"');
    for (const domain of asked) {
      expect(logged).not.toContain(domain);
      expect(scrape).not.toContain(domain);
    }
  });

  it('costs one quota unit, as /v1/verify does', async () => {
    const remaining = (r: { headers: Headers }) => Number(/;r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1]);
    const a = await privateGateway.request(`/v1/lookup/${prefixOf(NEVER[1]!, length)}`);
    const b = await privateGateway.request(`/v1/lookup/${prefixOf(NEVER[2]!, length)}`);
    const c = await privateGateway.verify('quota-check.example');
    expect([remaining(a) - remaining(b), remaining(b) - remaining(c)]).toEqual([1, 1]);
  });

  it('is cacheable like a record, and key-gated', async () => {
    expect(first.headers.get('cache-control')).toBe('public, max-age=60, s-maxage=300');
    expect(first.headers.get('vary')).toContain('Authorization');
    expect((await privateGateway.request(`/v1/lookup/${prefixOf(NEVER[0]!, length)}`, { key: null })).status).toBe(401);
  });

  it('refuses a prefix of another length, or not lowercase hex, with INVALID_PREFIX', async () => {
    for (const bad of [`${prefixOf(NEVER[0]!, length)}0`, 'G'.repeat(length), 'A'.repeat(length)]) {
      const p = expectProblem(await privateGateway.request(`/v1/lookup/${bad}`), 400, 'INVALID_PREFIX');
      expect(p.detail).toContain(`${length} lowercase hex digits`);
    }
  });
});
