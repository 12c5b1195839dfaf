/**
 * What changes under a running gateway, with no restart: the records folder going away and
 * coming back, API keys created and revoked. (A new build swapped in is live-rebuilds.test.ts.)
 * Every wait is a poll that ends when the gateway's answer changes; its bound only turns a
 * gateway that never notices into a failure, and no test asserts how long noticing took.
 */
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../access/api-keys.ts';
import { CURRENT_LINK } from '../../core/layout.ts';
import { addApiKey, cleanup, type TestGateway, useGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { liveRecordBytes } from '../support/packs.ts';
import type { Project } from '../support/project.ts';
import { poll } from '../support/wait.ts';

const KNOWN = 'acme-outdoor.example';
/** A bound on waiting for a change the gateway must notice (a failure past it, never a measure). */
const UNTIL = { timeoutMs: 20_000, intervalMs: 10 };

afterAll(cleanup);

describe('records folder removed while running', () => {
  let project: Project;
  let g: TestGateway;

  useGateway((t) => ({ project, g } = t));

  it('answers 503 STORE_UNAVAILABLE for known and never-audited domains, never a synthesized record, and recovers without restart', async () => {
    const knownBytes = await liveRecordBytes(project, KNOWN);
    // Warm the cache for a known domain and answer a never-audited one.
    expect((await g.verify(KNOWN)).status).toBe(200);
    expect((await g.verify('never-audited-a.example')).json.status).toBe('unverified');
    expect((await g.request('/healthz', { key: null })).json.status).toBe('ok');

    const away = `${project.recordsDir}.away`;
    await rename(project.recordsDir, away);

    // The live build's checked map and verified records may answer from memory for at most one
    // refresh interval (the map still proves what that build holds); then every domain is refused.
    const { value: known } = await poll(
      () => g.verify(KNOWN),
      (r) => r.status !== 200,
      UNTIL,
    );
    expectProblem(known, 503, 'STORE_UNAVAILABLE');
    for (const domain of ['never-audited-b.example', 'never-audited-a.example']) {
      const r = await g.verify(domain);
      expectProblem(r, 503, 'STORE_UNAVAILABLE');
      expect(r.text).not.toContain('unverified');
    }
    // Other known domains never cached are refused too.
    expectProblem(await g.verify('gadget-hub.example'), 503, 'STORE_UNAVAILABLE');
    // Input errors and auth keep their own answers.
    expectProblem(await g.verify('co.uk'), 400, 'INVALID_DOMAIN');
    expectProblem(await g.verify(KNOWN, { key: null }), 401, 'UNAUTHORIZED');

    const health = await g.request('/healthz', { key: null });
    expect(health.status).toBe(200);
    expect(health.json.status).toBe('degraded');
    expect(health.json.records.ok).toBe(false);

    // Restored: answers come back on the same gateway.
    await rename(away, project.recordsDir);
    const { value: back } = await poll(
      () => g.verify(KNOWN),
      (r) => r.status === 200,
      UNTIL,
    );
    expect(back.bytes.equals(knownBytes)).toBe(true);
    const unverified = await g.verify('never-audited-b.example');
    expect(unverified.status).toBe(200);
    expect(unverified.json.status).toBe('unverified');
    const { value: healthy } = await poll(
      () => g.request('/healthz', { key: null }),
      (r) => r.json?.status === 'ok',
      UNTIL,
    );
    expect(healthy.json.records.ok).toBe(true);
  });

  it('a records folder without its "current" link is STORE_UNAVAILABLE too, until the link is back', async () => {
    const link = join(project.recordsDir, CURRENT_LINK);
    const aside = `${link}.aside`;
    await rename(link, aside);
    try {
      const { value } = await poll(
        () => g.verify('never-audited-c.example'),
        (r) => r.status !== 200,
        UNTIL,
      );
      expectProblem(value, 503, 'STORE_UNAVAILABLE');
    } finally {
      await rename(aside, link);
    }
    const { value: back } = await poll(
      () => g.verify('never-audited-c.example'),
      (r) => r.status === 200,
      UNTIL,
    );
    expect(back.json).toMatchObject({ status: 'unverified' });
  });

  it('a key revoked while running is refused from its next reload on, with no restart; a key created while running works', async () => {
    const before = g.url;
    const created = await addApiKey(g, 'created-while-running');
    const { value: accepted } = await poll(
      () => g.verify(KNOWN, { key: created.key }),
      (r) => r.status === 200,
      UNTIL,
    );
    expect(accepted.json).toMatchObject({ domain: KNOWN });

    await revokeApiKey(project.apiKeysFile, created.id);
    const { value: refused } = await poll(
      () => g.verify(KNOWN, { key: created.key }),
      (r) => r.status !== 200,
      UNTIL,
    );
    expectProblem(refused, 401, 'UNAUTHORIZED');
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // Stays refused, and the other key is unaffected; same gateway, no restart.
    expect((await g.verify(KNOWN, { key: created.key })).status).toBe(401);
    expect((await g.verify(KNOWN)).status).toBe(200);
    expect(g.url).toBe(before);
  });

  it("revoking the gateway's own key while running locks it out too", async () => {
    await revokeApiKey(project.apiKeysFile, g.keyId);
    const { value: refused } = await poll(
      () => g.verify(KNOWN),
      (r) => r.status !== 200,
      UNTIL,
    );
    expectProblem(refused, 401, 'UNAUTHORIZED');
    const fresh = await addApiKey(g, 'replacement');
    const { value: accepted } = await poll(
      () => g.verify(KNOWN, { key: fresh.key }),
      (r) => r.status === 200,
      UNTIL,
    );
    expect(accepted.json).toMatchObject({ domain: KNOWN });
    expectProblem(await g.verify(KNOWN), 401, 'UNAUTHORIZED');
  });
});
