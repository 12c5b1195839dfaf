/**
 * `GET /v1/absence` and the absence proofs given with never-audited answers over MCP: every proof
 * the gateway gives verifies with the portable verifier against the served key set, for the live
 * build and for a kept one; a domain with a record has none (HAS_RECORD); the usual key, domain and
 * quota rules hold.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyAbsence } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { absenceProofSchema } from '../../core/schemas/absence.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { publishedKeySet } from '../support/outputs.ts';
import { build, makeProject } from '../support/project.ts';

afterAll(cleanup);

const GOLD = 'acme-outdoor.example';
const NEVER = 'never-audited-absence.example';
const months = ['2026-10-20', '2026-11-01'].map((d) => Date.parse(`${d}T00:00:00Z`));

describe('GET /v1/absence', async () => {
  // Two builds: the second drops GOLD, so GOLD is absent from the live build and present in the kept one.
  const project = await makeProject({ build: false });
  await build(project, { now: months[0]!, keep: 2 });
  const file = join(project.auditsDir, 'verified.jsonl');
  await writeFile(
    file,
    (await readFile(file, 'utf8'))
      .split('\n')
      .filter((l) => !l.includes(`"${GOLD}"`))
      .join('\n'),
  );
  await build(project, { now: months[1]!, keep: 2 });
  const g = await startTestGateway(project, { rateLimitPerMinute: 1000 });
  const { keySet } = await publishedKeySet(project);
  const builds = ((await g.request('/v1/builds')).json as { builds: { id: string }[] }).builds.map((b) => b.id);

  it('proves a never-audited domain absent from the live build: the wire schema, and the portable verifier accepts it', async () => {
    const r = await g.request(`/v1/absence?domain=https://WWW.${NEVER}/x`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('cache-control')).toBe('public, max-age=60, s-maxage=300');
    expect(absenceProofSchema.safeParse(r.json).success).toBe(true);
    expect(r.json).toMatchObject({
      domain: NEVER,
      statement: { build: builds[0], issued_at: '2026-11-01T00:00:00.000Z', key_id: project.kid },
    });
    expect(verifyAbsence(r.json, NEVER, keySet)).toMatchObject({ valid: true, build: builds[0], keyId: project.kid });
    // The same proof for the never-audited answer's conditional request.
    expect((await g.request(`/v1/absence?domain=${NEVER}`, { headers: { 'if-none-match': r.headers.get('etag')! } })).status).toBe(304);
    // A domain the live build dropped is absent now, with a proof of it.
    expect(verifyAbsence((await g.request(`/v1/absence?domain=${GOLD}`)).json, GOLD, keySet)).toMatchObject({
      valid: true,
      build: builds[0],
    });
  });

  it("is 404 HAS_RECORD for a domain with a record; in a kept build, by that build's map", async () => {
    expectProblem(await g.request('/v1/absence?domain=gadget-hub.example'), 404, 'HAS_RECORD');
    expectProblem(await g.request(`/v1/absence?domain=${GOLD}&build=${builds[1]}`), 404, 'HAS_RECORD');
    const kept = await g.request(`/v1/absence?domain=${NEVER}&build=${builds[1]}`);
    expect(verifyAbsence(kept.json, NEVER, keySet)).toMatchObject({ valid: true, build: builds[1] });
    expectProblem(await g.request(`/v1/absence?domain=${NEVER}&build=nope`), 404, 'BUILD_NOT_FOUND');
    expectProblem(await g.request(`/v1/absence?domain=${NEVER}&build=${builds[1]}&build=${builds[0]}`), 400, 'INVALID_REQUEST');
  });

  it('the key first (401 before 400), then the domain; one quota unit a request; in the OpenAPI document', async () => {
    expectProblem(await g.request('/v1/absence?domain=co.uk', { key: null }), 401, 'UNAUTHORIZED');
    expectProblem(await g.request('/v1/absence?domain=co.uk'), 400, 'INVALID_DOMAIN');
    expectProblem(await g.request('/v1/absence'), 400, 'INVALID_DOMAIN');
    const left = (r: { headers: Headers }) => Number(/r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1]);
    const a = await g.request(`/v1/absence?domain=${NEVER}`);
    const b = await g.request(`/v1/absence?domain=${NEVER}`);
    expect(left(a) - left(b)).toBe(1);
    const doc = (await g.request('/openapi.json', { key: null })).json as {
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(doc.paths['/v1/absence']!.get.responses)).toEqual(
      expect.arrayContaining(['200', '304', '400', '401', '404', '503']),
    );
    expect(doc.components.schemas).toHaveProperty('AbsenceProof');
    expect(doc.components.schemas).toHaveProperty('BuildStatement');
  });

  it('MCP: an unverified answer comes with its proof, an audited one without; verify_merchants gives absence_proof', async () => {
    const client = await connectHttpClient(g.url, g.key);
    try {
      const never = (await client.callTool({ name: 'verify_merchant', arguments: { domain: NEVER } })) as {
        content: { text: string }[];
        structuredContent: Record<string, unknown>;
      };
      expect(never.structuredContent).toMatchObject({ code: 'NEVER_AUDITED', domain: NEVER, record: { status: 'unverified' } });
      expect(never.content).toHaveLength(2);
      expect(verifyAbsence(JSON.parse(never.content[1]!.text), NEVER, keySet)).toMatchObject({ valid: true, build: builds[0] });
      const audited = (await client.callTool({ name: 'verify_merchant', arguments: { domain: 'gadget-hub.example' } })) as {
        content: unknown[];
      };
      expect(audited.content).toHaveLength(1);
      const batch = (await client.callTool({
        name: 'verify_merchants',
        arguments: { domains: [NEVER, 'gadget-hub.example'] },
      })) as unknown as { structuredContent: { results: Record<string, any>[] } };
      const [first, second] = batch.structuredContent.results;
      expect(verifyAbsence(first!.absence_proof, NEVER, keySet)).toMatchObject({ valid: true });
      expect(second).not.toHaveProperty('absence_proof');
      expect(second!.record.domain).toBe('gadget-hub.example');
    } finally {
      await client.close();
    }
  });
});
