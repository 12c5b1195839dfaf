/**
 * One issuer: a gateway answers under its live build's issuer only. Configured with another one
 * (--issuer / MVR_ISSUER), from a records folder or an http origin alike, it refuses that build
 * as it refuses any build that does not check: never a mix of issuers, `/healthz` degraded naming
 * the refused build, one log line naming both issuers, and the build served before (if any) stays
 * served. Over a build of its own issuer everything is served.
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CURRENT_LINK } from '../../core/layout.ts';
import { defaultSchemaUrl } from '../../core/rules/record.ts';
import { cleanup, startTestGateway, type TestGateway, trustingProject } from '../support/gateway.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { build, ISSUER, makeProject } from '../support/project.ts';
import { startStaticOrigin } from '../support/static-origin.ts';
import { poll } from '../support/wait.ts';

afterAll(cleanup);

const OTHER = 'other-issuer.example';
const KNOWN = 'acme-outdoor.example';
const NEVER = 'never-audited-issuer.example';

/** The refused build's one log line, naming both issuers. */
function expectOneRefusalLine(g: TestGateway, issuers: { build: string; gateway: string }): void {
  const lines = g.logs.filter((l) => l.msg === 'build refused; the build served before (if any) stays served');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 'warn' });
  expect(String(lines[0]?.reason)).toContain(
    `its issuer is ${issuers.build}, this gateway's (--issuer / MVR_ISSUER) is ${issuers.gateway}`,
  );
}

/** With no build served before, every answer that names an issuer is refused, and health names the refused build. */
async function expectRefused(g: TestGateway, issuers = { build: ISSUER, gateway: OTHER }): Promise<void> {
  for (const domain of [KNOWN, NEVER]) {
    const r = await g.verify(domain);
    expect(r.status, r.text).toBe(503);
    expect(r.json).toMatchObject({ code: 'STORE_UNAVAILABLE', type: `https://${issuers.gateway}/problems/store-unavailable` });
    expect(r.text).not.toContain(`"issuer":"${issuers.build}"`);
  }
  const health = await g.request('/healthz', { key: null });
  expect(health.json).toMatchObject({ status: 'degraded', records: { ok: false } });
  // The refused build by its id (an http origin, which serves one build's files, by its address).
  expect((health.json as { records: { refused: string | null } }).records.refused).toEqual(expect.any(String));
  expectOneRefusalLine(g, issuers);
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
      const g = await startTestGateway(
        { ...project, recordsDir: origin.url },
        { issuer: OTHER, schemaUrl: `https://${OTHER}/schemas/verification/v1`, trust: await trustingProject(project) },
      );
      await expectRefused(g);
    } finally {
      await origin.stop();
    }
  });

  it('with its own issuer the gateway serves the build: records and never-audited answers name that issuer', async () => {
    const g = await startTestGateway(project);
    expect((await g.verify(KNOWN)).json).toMatchObject({ issuer: ISSUER, status: 'verified' });
    expect((await g.verify(NEVER)).json).toMatchObject({
      issuer: ISSUER,
      status: 'unverified',
      schema: `https://${ISSUER}/schemas/verification/v1`,
    });
    expect((await g.request('/healthz', { key: null })).json).toMatchObject({ status: 'ok' });
    expect(g.logs.filter((l) => /issuer/.test(l.msg))).toEqual([]);
  });

  it('a running gateway refuses a build of another issuer once it goes live, and serves the next build of its own', async () => {
    const p = await makeProject();
    const g = await startTestGateway(p);
    const first = (await g.verify(KNOWN)).json as { issuer: string; issued_at: string };
    expect(first).toMatchObject({ issuer: ISSUER });
    await build(p, { issuer: OTHER, schemaUrl: defaultSchemaUrl(OTHER), now: Date.parse('2026-11-02T00:00:00Z') });
    const { value: health } = await poll(
      () => g.request('/healthz', { key: null }),
      (r) => (r.json as { status: string }).status === 'degraded',
    );
    expect(health.json).toMatchObject({ records: { ok: true } });
    expectOneRefusalLine(g, { build: OTHER, gateway: ISSUER });
    // The build served before stays served, under its own issuer only.
    expect((await g.verify(KNOWN)).json).toMatchObject({ issuer: ISSUER, status: 'verified', issued_at: first.issued_at });
    expect((await g.verify(NEVER)).json).toMatchObject({ issuer: ISSUER, status: 'unverified' });
    await build(p, { now: Date.parse('2026-11-03T00:00:00Z') });
    await poll(
      () => g.request('/healthz', { key: null }),
      (r) => (r.json as { status: string }).status === 'ok',
    );
    expect((await g.verify(KNOWN)).json).toMatchObject({ issuer: ISSUER, status: 'verified', issued_at: '2026-11-03T00:00:00.000Z' });
    expect((await g.verify(NEVER)).json).toMatchObject({ issuer: ISSUER, status: 'unverified' });
  });
});
