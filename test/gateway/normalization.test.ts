import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, RECORD_CACHE_CONTROL, type TestGateway, useGateway } from '../support/gateway.ts';
import { liveRecordBytes } from '../support/packs.ts';
import { ISSUER, type Project, SCHEMA_URL } from '../support/project.ts';

let project: Project;
let g: TestGateway;

useGateway((t) => ({ project, g } = t));
afterAll(cleanup);

describe('normalization', () => {
  it.each([
    'acme-outdoor.example',
    'Acme-Outdoor.example',
    'ACME-OUTDOOR.EXAMPLE',
    'https://www.acme-outdoor.example:443/path?q=1#f',
    'http://Acme-Outdoor.example',
    'acme-outdoor.example.',
    'acme-outdoor.example:8443',
    'user:pw@acme-outdoor.example',
    'shop.acme-outdoor.example/x',
    '  acme-outdoor.example  ',
  ])('%s returns the identical bytes of the stored record', async (form) => {
    const file = await liveRecordBytes(project, 'acme-outdoor.example');
    const r = await g.verify(form);
    expect(r.status).toBe(200);
    expect(r.bytes.equals(file)).toBe(true);
  });

  it('a U-label domain, percent-encoded in the query, returns the A-label record', async () => {
    const aLabel = 'xn--bcher-haus-9db.example';
    const file = await liveRecordBytes(project, aLabel);
    const query = '/v1/verify?domain=b%C3%BCcher-haus.example';
    expect(encodeURIComponent('bücher-haus.example')).toBe('b%C3%BCcher-haus.example');
    for (const path of [
      query,
      '/v1/verify?domain=B%C3%9CCHER-HAUS.example',
      `/v1/verify?domain=${aLabel}`,
      `/v1/verify?domain=${encodeURIComponent('https://www.bücher-haus.example/regal')}`,
    ]) {
      const r = await g.request(path);
      expect(r.status, path).toBe(200);
      expect(r.bytes.equals(file), path).toBe(true);
      expect(r.json.domain).toBe(aLabel);
    }
  });

  it('reduces to the registrable domain with the private section of the Public Suffix List', async () => {
    const cases: [string, string][] = [
      ['www.northwind-traders.example.co.uk', 'example.co.uk'],
      ['https://shop.fictional-candles.myshopify.com/products/x', 'fictional-candles.myshopify.com'],
      ['tiny-knits.github.io', 'tiny-knits.github.io'],
      ['https://outlet.southwind-goods.example.com.au:8443/', 'example.com.au'],
    ];
    for (const [form, domain] of cases) {
      const r = await g.verify(form);
      expect(r.status, form).toBe(200);
      expect(r.json.domain, form).toBe(domain);
      if (r.json.status !== 'unverified') expect(r.bytes.equals(await liveRecordBytes(project, domain))).toBe(true);
    }
  });
});

describe('never-audited domain', () => {
  const expectUnverified = (body: any, domain: string) => {
    expect(body).toMatchObject({
      schema: SCHEMA_URL,
      domain,
      status: 'unverified',
      tier: null,
      score: null,
      max_score: 100,
      sub_scores: { visibility: 0, recommendation_rate: 0, technical_readiness: 0 },
      flags: [],
      evidence: { ok: false, coverage: 0, site_coverage: 0, engines_ran: [], engines_skipped: [], blockers: [] },
      archetype: 'unknown',
      first_seen: null,
      last_audited_at: null,
      next_audit_at: null,
      issuer: ISSUER,
    });
    expect(body.evidence).toEqual({ ok: false, coverage: 0, site_coverage: 0, engines_ran: [], engines_skipped: [], blockers: [] });
    expect(body.sub_scores).toEqual({ visibility: 0, recommendation_rate: 0, technical_readiness: 0 });
    expect(body.issued_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Math.abs(Date.parse(body.issued_at) - Date.now())).toBeLessThan(60_000);
  };

  it('is 200 unverified with score null, unsigned by default, with the record headers', async () => {
    const r = await g.verify('https://www.Never-Audited-Shop.example/cart');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('cache-control')).toBe(RECORD_CACHE_CONTROL);
    expect(r.headers.get('vary')).toBe('Authorization');
    expect(r.headers.get('etag')).toMatch(/^"[^"\s]+"$/);
    expectUnverified(r.json, 'never-audited-shop.example');
    expect('signature' in r.json).toBe(false);
    expect('key_id' in r.json).toBe(false);
  });

  it('is never 404, also under a platform suffix and for a U-label', async () => {
    for (const [form, domain] of [
      ['someone-new.myshopify.com', 'someone-new.myshopify.com'],
      ['neu-läden.example', 'xn--neu-lden-4za.example'],
      ['brand-new.co.uk', 'brand-new.co.uk'],
    ]) {
      const r = await g.verify(form!);
      expect(r.status, form).toBe(200);
      expectUnverified(r.json, domain!);
    }
  });
});
