/**
 * The public, unauthenticated endpoints: the key set, the record JSON Schema (checked with a
 * real JSON Schema validator against every record the gateway serves), OpenAPI and health.
 */

import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseKeySet } from '@merchant-verify/verifier';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyRecordNode } from '../../core/crypto/signing.ts';
import { cleanup, type TestGateway, useGateway } from '../support/gateway.ts';
import { liveRecords, publishedKeySet } from '../support/outputs.ts';
import { type Project, SCHEMA_URL } from '../support/project.ts';
import { poll } from '../support/wait.ts';

// ajv-formats is CommonJS: its module object is the plugin, and carries it again as `default`.
const addFormats = addFormatsModule.default;

let project: Project;
let g: TestGateway;

useGateway((t) => ({ project, g } = t));
afterAll(cleanup);

/** Any member named `d` anywhere in a JSON value. */
function hasMemberD(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasMemberD);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => k === 'd' || hasMemberD(v));
  return false;
}

describe('GET /.well-known/merchant-verify-keys.json', () => {
  it('is public: 200 without a key, CORS *, a public cache header, the published bytes, no private member', async () => {
    const r = await g.request('/.well-known/merchant-verify-keys.json', { key: null });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const cache = r.headers.get('cache-control')!;
    expect(cache).toMatch(/\bpublic\b/);
    expect(cache).toMatch(/max-age=\d+/);
    expect(r.headers.get('content-type')).toMatch(/^application\/(jwk-set\+)?json/);
    expect(r.headers.get('etag')).toMatch(/^"[^"\s]+"$/);
    const { bytes, keySet } = await publishedKeySet(project);
    expect(r.bytes.equals(bytes)).toBe(true);
    expect(hasMemberD(r.json)).toBe(false);
    expect(r.text).not.toMatch(/"d"\s*:/);
    expect(keySet.keys.map((k) => k.kid)).toEqual([project.kid]);
    expect(r.json.keys[0]).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      kid: project.kid,
      use: 'sig',
      alg: 'EdDSA',
    });
  });

  it('works with a key too, answers HEAD, and 304 on If-None-Match', async () => {
    const withKey = await g.request('/.well-known/merchant-verify-keys.json');
    expect(withKey.status).toBe(200);
    const head = await g.request('/.well-known/merchant-verify-keys.json', { method: 'HEAD', key: null });
    expect(head.status).toBe(200);
    expect(head.bytes.length).toBe(0);
    expect(head.headers.get('content-length')).toBe(String(withKey.bytes.length));
    const nm = await g.request('/.well-known/merchant-verify-keys.json', {
      key: null,
      headers: { 'if-none-match': withKey.headers.get('etag')! },
    });
    expect(nm.status).toBe(304);
    expect(nm.bytes.length).toBe(0);
  });
});

describe('key set trouble', () => {
  it('a published key set carrying a private member is never served, and no record is served against it', async () => {
    const { bytes } = await publishedKeySet(project);
    const privateJwk = JSON.parse(await readFile(join(project.keysDir, 'signing', `${project.kid}.jwk.json`), 'utf8')) as { d: string };
    const leaked = { keys: [{ ...JSON.parse(bytes.toString('utf8')).keys[0], d: privateJwk.d }] };
    await writeFile(project.keySetFile, JSON.stringify(leaked));
    try {
      const { value } = await poll(
        () => g.request('/.well-known/merchant-verify-keys.json', { key: null }),
        (r) => r.status !== 200,
        { timeoutMs: 2000 },
      );
      expect(value.status).toBe(503);
      expect(value.text).not.toContain(privateJwk.d);
      expect(value.json.code).toBe('STORE_UNAVAILABLE');
      expect((await g.verify('acme-outdoor.example')).json.code).toBe('STORE_UNAVAILABLE');
      expect((await g.verify('never-audited-keys.example')).json.code).toBe('STORE_UNAVAILABLE');
      expect((await g.request('/healthz', { key: null })).json.status).toBe('degraded');
      for (const line of g.logs) expect(JSON.stringify(line)).not.toContain(privateJwk.d);
    } finally {
      await writeFile(project.keySetFile, bytes);
    }
    const { value: back } = await poll(
      () => g.request('/.well-known/merchant-verify-keys.json', { key: null }),
      (r) => r.status === 200,
      { timeoutMs: 3000 },
    );
    expect(back.bytes.equals(bytes)).toBe(true);
    expect((await g.verify('acme-outdoor.example')).status).toBe(200);
  });
});

describe('GET /schemas/verification/v1', () => {
  let schema: Record<string, any>;
  let served: { domain: string; body: unknown }[];

  beforeAll(async () => {
    const r = await g.request('/schemas/verification/v1', { key: null });
    expect(r.status).toBe(200);
    schema = r.json;
    // Every record the gateway serves: all sample domains, plus never-audited answers (unsigned and signed).
    const records = await liveRecords(project);
    served = [];
    for (const domain of records.keys()) {
      const rec = await g.verify(domain);
      expect(rec.status, domain).toBe(200);
      expect(rec.bytes.equals(records.get(domain)!)).toBe(true);
      served.push({ domain, body: rec.json });
    }
    expect(served.length).toBeGreaterThanOrEqual(30);
    for (const domain of ['never-audited-schema.example', 'someone.myshopify.com'])
      served.push({ domain, body: (await g.verify(domain)).json });
  });

  it('is a public JSON Schema (2020-12) identified by the schema URL', async () => {
    const r = await g.request('/schemas/verification/v1', { key: null });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('cache-control')).toMatch(/\bpublic\b/);
    expect(r.headers.get('content-type')).toMatch(/^application\/(schema\+)?json/);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toBe(SCHEMA_URL);
    expect(schema.type).toBe('object');
    expect(schema.additionalProperties).toBe(false);
  });

  it('every served record validates against it (Ajv 2020-12, with formats)', () => {
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    for (const { domain, body } of served) {
      const ok = validate(body);
      expect(ok ? [] : validate.errors, domain).toEqual([]);
    }
    // The schema says something: it refuses what is not a record.
    const sample = served[0]!.body as Record<string, unknown>;
    expect(validate({ ...sample, score: 101 })).toBe(false);
    expect(validate({ ...sample, expires_at: '2030-01-01T00:00:00.000Z' })).toBe(false);
    expect(validate({ ...sample, status: 'gold' })).toBe(false);
    const { domain: _omit, ...noDomain } = sample;
    expect(validate(noDomain)).toBe(false);
  });

  it('and every served record verifies against the served key set (or is unsigned unverified)', async () => {
    const keySet = parseKeySet((await g.request('/.well-known/merchant-verify-keys.json', { key: null })).json);
    for (const { domain, body } of served) {
      const verdict = verifyRecordNode(body, keySet);
      if ((body as { status: string }).status === 'unverified' && !('signature' in (body as object))) {
        expect(verdict, domain).toMatchObject({ valid: false, code: 'UNSIGNED' });
      } else {
        expect(verdict.valid, domain).toBe(true);
      }
    }
  });

  it('compiles with a standard validator in its default (strict) mode, with the standard formats only', () => {
    // Ajv's strict mode refuses unknown keywords and unknown formats (such as a non-standard
    // "ends_with"), so a client can use the schema as served.
    const ajv = new Ajv2020();
    addFormats(ajv);
    expect(() => ajv.compile(schema)).not.toThrow();
    // The `schema` member accepts the record's schema URL and nothing that does not end in /verification/v1.
    const validate = ajv.compile({ ...schema.properties.schema, $schema: schema.$schema });
    expect(validate(SCHEMA_URL)).toBe(true);
    expect(validate('https://merchant-verify.example/schemas/verification/v2')).toBe(false);
  });
});

describe('GET /openapi.json', () => {
  it('is OpenAPI 3.1.0 describing GET /v1/verify with the bearer key and the record schema', async () => {
    const r = await g.request('/openapi.json', { key: null });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = r.json;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/v1/verify']).toBeDefined();
    const get = doc.paths['/v1/verify'].get;
    expect(
      get.parameters.some((p: { name: string; in: string; required: boolean }) => p.name === 'domain' && p.in === 'query' && p.required),
    ).toBe(true);
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
    expect(Object.values(doc.components.securitySchemes)).toContainEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
  });
});

describe('GET /healthz', () => {
  it('is ok with a live build, degraded (still 200) when the records folder is gone, ok again when it is back', async () => {
    const ok = await g.request('/healthz', { key: null });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    expect(ok.json.status).toBe('ok');
    expect(ok.json.records.ok).toBe(true);
    expect(ok.json.key_set).toMatchObject({ ok: true, keys: 1 });
    // No file system paths leak into the public health answer.
    expect(ok.text).not.toContain(project.root);

    const away = `${project.recordsDir}.away`;
    await rename(project.recordsDir, away);
    try {
      const { value } = await poll(
        () => g.request('/healthz', { key: null }),
        (r) => r.json?.status === 'degraded',
        { timeoutMs: 2000 },
      );
      expect(value.status).toBe(200);
      expect(value.json.records.ok).toBe(false);
      expect(value.text).not.toContain(project.root);
    } finally {
      await rename(away, project.recordsDir);
    }
    await poll(
      () => g.request('/healthz', { key: null }),
      (r) => r.json?.status === 'ok',
      { timeoutMs: 3000 },
    );
  });
});
