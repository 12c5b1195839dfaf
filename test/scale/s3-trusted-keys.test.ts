/**
 * Keys the operator trusts, on a bucket: a writer of the bucket who holds no signing key publishes
 * a build signed by a key of their own, with a key set naming it; the gateway, started with the
 * keys it trusts, refuses it (logged, counted) and keeps serving the previous build, whose answers
 * verify against the pinned keys. A rotation by `mvr keygen` (endorsed by the active key) and
 * `mvr publish` is served as usual. Without the keys from the operator, nothing starts on a bucket.
 * A compact private lookup (`GET /v1/lookup/{bits}/{hex}`) from a bucket answers and verifies as from a folder.
 */
import { readFile } from 'node:fs/promises';
import { gatewaySource, recordMatchesEntry, trustedKeySet, verifyOnlineCompact, verifyRecord } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateJwk } from '../../core/crypto/signing.ts';
import { keygen } from '../../keyring/signing-keys.ts';
import { s3ConfigFromEnv } from '../../storage/s3/bucket.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, startTestGateway, waitForLog } from '../support/gateway.ts';
import { NO_TRUSTED_KEYS } from '../support/gateway-expect.ts';
import { parseMetrics, sampleOf } from '../support/metrics-text.ts';
import { build, GOLD, makeProject, NOW, UNAUDITED } from '../support/project.ts';
import { gatewayOnBucket, publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { poll } from '../support/wait.ts';

const BUCKET = 'mvr-trust';
let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3([BUCKET]);
});
afterAll(async () => {
  await cleanup();
  await s3.close();
});

describe('a gateway on a bucket, started with the keys it trusts', () => {
  it('keeps serving the previous build when the bucket gains one signed by an unendorsed key; serves an endorsed rotation', async () => {
    const p = await makeProject();
    await publishTo(s3, BUCKET, 'prod', p);
    const pinned = JSON.parse(await readFile(p.keySetFile, 'utf8'));
    const g = await startTestGateway(p, {
      records: { url: `s3://${BUCKET}/prod`, s3: s3ConfigFromEnv(s3.env), publicDir: '/nonexistent' },
      trust: { trustedKeys: pinned },
      metrics: { listen: { host: '127.0.0.1', port: 0 } },
    });
    const before = await g.verify(GOLD);
    expect(before.status).toBe(200);

    // The writer's build: signed by their key, published with a key set listing it beside the genuine one.
    const intruder = generatePrivateJwk();
    await build(p, { now: NOW + 60_000, signingKey: JSON.stringify(intruder) });
    await publishTo(s3, BUCKET, 'prod', p);
    const refused = await waitForLog(g, (l) => l.msg === 'build refused; the build served before (if any) stays served', 10_000);
    expect(refused.reason).toMatch(new RegExp(`KEY_NOT_TRUSTED \\(signed by key "${intruder.kid}"`));
    const after = await g.verify(GOLD);
    expect(after.status).toBe(200);
    expect(after.bytes).toEqual(before.bytes);
    expect(verifyRecord(after.json, pinned, { domain: GOLD })).toMatchObject({ valid: true, keyId: p.kid });
    const metrics = parseMetrics(await (await fetch(g.gateway.metricsUrl!)).text());
    expect(sampleOf(metrics, 'mvr_builds_refused_total')).toBe(1);

    // The operator's rotation: the new key is endorsed by the active one, and the build is served.
    const k2 = await keygen(p.keysDir);
    await build(p, { now: NOW + 120_000 });
    await publishTo(s3, BUCKET, 'prod', p);
    const { value: rotated } = await poll(
      () => g.verify(GOLD),
      (r) => r.json?.key_id === k2,
      { timeoutMs: 10_000 },
    );
    const served = (await g.request('/.well-known/merchant-verify-keys.json', { key: null })).json;
    expect(verifyRecord(rotated.json, trustedKeySet(served, pinned).keySet, { domain: GOLD })).toMatchObject({ valid: true, keyId: k2 });
  });
});

describe('a gateway on a bucket started without the keys it trusts', () => {
  it('serve, mcp and changes refuse to start (INVALID_CONFIG, exit 2); MVR_TRUSTED_KEYS names them', async () => {
    const p = await makeProject();
    await publishTo(s3, BUCKET, 'refused', p);
    const records = ['--records', `s3://${BUCKET}/refused`];
    for (const args of [['serve', '--api-keys', p.apiKeysFile], ['mcp'], ['changes', '--since', 'none']]) {
      const r = await runCli([...args, ...records], s3.env);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(NO_TRUSTED_KEYS);
    }
    // Given by the variable, the keys open the bucket: the answer is about the build asked for.
    const named = await runCli(['changes', '--since', 'none', ...records], { ...s3.env, MVR_TRUSTED_KEYS: p.keySetFile });
    expect(named.stderr).toContain('BUILD_NOT_FOUND');
    expect(named.code).toBe(1);
  });

  it('answers a compact private lookup from the bucket, verified as on a folder: a record and a proven absence, no request naming the domain', async () => {
    const p = await makeProject();
    await publishTo(s3, BUCKET, 'lookup', p);
    const g = await gatewayOnBucket(s3, BUCKET, 'lookup', p);
    const source = gatewaySource({ baseUrl: g.url, apiKey: g.key });
    const from = g.logs.length;
    const gold = await verifyOnlineCompact({ domain: GOLD, source });
    const never = await verifyOnlineCompact({ domain: UNAUDITED, source });
    const logged = g.logs.slice(from).map((l) => JSON.stringify(l));
    expect(logged.some((l) => l.includes('/v1/lookup/'))).toBe(true);
    for (const line of logged) for (const name of [GOLD, UNAUDITED]) expect(line).not.toContain(name);
    expect(gold).toMatchObject({ code: null, entry: { domain: GOLD }, bucket: expect.stringMatching(/^\d+\/[0-9a-f]+$/) });
    // The full record, fetched the plain way, is the one the proven entry commits to.
    expect(recordMatchesEntry(gold.entry!, (await g.verify(GOLD)).json)).toBeNull();
    expect(never).toMatchObject({ code: 'NEVER_AUDITED', verification: { absence: { valid: true } } });
  });
});
