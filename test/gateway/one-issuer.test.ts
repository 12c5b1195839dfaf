/**
 * One issuer: a gateway answers under its live build's issuer only. Configured with another one
 * (--issuer / MVR_ISSUER), from a records folder or an http origin alike, it refuses that build:
 * no signed record, no never-audited record, `/healthz` degraded saying why in general words,
 * and one log line naming both issuers. Over a build of its own issuer everything is served.
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CURRENT_LINK } from '../../core/layout.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { build, ISSUER, makeProject } from '../support/project.ts';
import { defaultSchemaUrl } from '../../core/record.ts';
import { poll } from '../support/wait.ts';
import { startStaticOrigin } from '../support/static-origin.ts';

afterAll(cleanup);

const OTHER = 'other-issuer.example';
const KNOWN = 'acme-outdoor.example';
const NEVER = 'never-audited-issuer.example';

/** Every answer that names an issuer is refused: the signed record, the never-audited one, and health says why. */
async function expectRefused(g: TestGateway, issuers = { build: ISSUER, gateway: OTHER }): Promise<void> {
  for (const domain of [KNOWN, NEVER]) {
    const r = await g.verify(domain);
    expect(r.status, r.text).toBe(503);
    expect(r.json).toMatchObject({ code: 'STORE_UNAVAILABLE', type: `https://${issuers.gateway}/problems/store-unavailable` });
    expect(r.text).not.toContain(`"issuer":"${issuers.build}"`);
  }
  const health = await g.request('/healthz', { key: null });
  expect(health.json).toMatchObject({ status: 'degraded', records: { ok: false, error: "build refused: made for another issuer than this gateway's" } });
  const lines = g.logs.filter((l) => l.msg === "build refused: its issuer is not this gateway's");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 'error', build_issuer: issuers.build, gateway_issuer: issuers.gateway });
}

describe('one issuer per gateway', async () => {
  const project = await makeProject();

  it(`a records folder built for ${ISSUER}, served with --issuer ${OTHER}: refused whole, never a mix`, async () => {
    const g = await startTestGateway(project, { issuer: OTHER, schemaUrl: `https://${OTHER}/schemas/verification/v1` });
    await expectRefused(g);
    // MCP answers from the same service: an error, never a record under either issuer.
    const client = await connectHttpClient(g.url, g.key);
    const result = await client.callTool({ name: 'verify_merchant', arguments: { domain: NEVER } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('STORE_UNAVAILABLE');
    await client.close();
    // Asked again, the refused build is still one log line.
    await expectRefused(g);
  });

  it('the same build from an http origin is refused the same way', async () => {
    const origin = await startStaticOrigin(await realpath(join(project.recordsDir, CURRENT_LINK)));
    try {
      const g = await startTestGateway({ ...project, recordsDir: origin.url }, { issuer: OTHER, schemaUrl: `https://${OTHER}/schemas/verification/v1` });
      await expectRefused(g);
    } finally {
      await origin.stop();
    }
  });

  it('with its own issuer the gateway serves the build: records and never-audited answers name that issuer', async () => {
    const g = await startTestGateway(project);
    expect((await g.verify(KNOWN)).json).toMatchObject({ issuer: ISSUER, status: 'verified' });
    expect((await g.verify(NEVER)).json).toMatchObject({ issuer: ISSUER, status: 'unverified', schema: `https://${ISSUER}/schemas/verification/v1` });
    expect((await g.request('/healthz', { key: null })).json).toMatchObject({ status: 'ok' });
    expect(g.logs.filter((l) => /issuer/.test(l.msg))).toEqual([]);
  });

  it('a running gateway refuses a build of another issuer once it goes live, and serves the next build of its own', async () => {
    const p = await makeProject();
    const g = await startTestGateway(p);
    expect((await g.verify(KNOWN)).json).toMatchObject({ issuer: ISSUER });
    await build(p, { issuer: OTHER, schemaUrl: defaultSchemaUrl(OTHER), now: Date.parse('2026-11-02T00:00:00Z') });
    await poll(() => g.request('/healthz', { key: null }), (r) => (r.json as { status: string }).status === 'degraded');
    await expectRefused(g, { build: OTHER, gateway: ISSUER });
    await build(p, { now: Date.parse('2026-11-03T00:00:00Z') });
    await poll(() => g.request('/healthz', { key: null }), (r) => (r.json as { status: string }).status === 'ok');
    expect((await g.verify(KNOWN)).json).toMatchObject({ issuer: ISSUER, status: 'verified', issued_at: '2026-11-03T00:00:00.000Z' });
    expect((await g.verify(NEVER)).json).toMatchObject({ issuer: ISSUER, status: 'unverified' });
  });
});
