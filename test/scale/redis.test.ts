/**
 * API keys and quotas in Redis, on a real redis-server: `mvr apikey --redis` stores hashes only,
 * every gateway sees a new key or a revocation without a restart, one quota holds across
 * gateways, and what happens while Redis is down. Waits end when the gateway's answer changes;
 * their bound only fails a gateway that never notices, and no test asserts how long it took.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../access/api-key-store.ts';
import { createApiKey, revokeApiKey } from '../../access/api-keys.ts';
import { redisApiKeyTable } from '../../access/api-keys-redis.ts';
import { connectRedis, type RedisClient } from '../../access/redis.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, startTestGateway, type TestGateway, waitForLog } from '../support/gateway.ts';
import { expectCauseLogged, expectProblem } from '../support/gateway-expect.ts';
import { needing } from '../support/programs.ts';
import { makeProject, type Project } from '../support/project.ts';
import { REDIS, startRedis, type TestRedis } from '../support/redis-server.ts';
import { poll, waitFor } from '../support/wait.ts';

const GOLD = 'acme-outdoor.example';
/** A bound on waiting for a change a gateway must notice (a failure past it, never a measure). */
const UNTIL = { timeoutMs: 20_000, intervalMs: 20 };

describe.skipIf(!REDIS.path)(needing(REDIS, 'API keys and quotas in Redis (real redis-server)'), () => {
  let redis: TestRedis;
  let client: RedisClient;
  let project: Project;
  const gateways: TestGateway[] = [];
  /** `mvr ...args` on this test's Redis, through the CLI's own entry point in this process (no Node start for each). */
  const mvrRun = (...args: string[]) => runCli(args, { MVR_REDIS_URL: redis.url });
  /** The same, failing the test when the command does not exit 0. */
  const mvr = async (...args: string[]) => {
    const r = await mvrRun(...args);
    if (r.code !== 0) throw new Error(`mvr ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r;
  };
  const gateway = async (rateLimitPerMinute = 0, now?: () => number) => {
    const g = await startTestGateway(project, { redisUrl: redis.url, rateLimitPerMinute, now });
    gateways.push(g);
    return g;
  };

  beforeAll(async () => {
    redis = await startRedis();
    client = await connectRedis(redis.url);
    project = await makeProject();
  });
  afterAll(async () => {
    await client.close().catch(() => undefined);
    await cleanup();
    await redis.stop();
  });

  it('`mvr apikey create|list|revoke --redis` keeps hashes only', async () => {
    // An unknown id is refused whatever else the table holds: asked beside the create.
    const unknownRevoke = mvrRun('apikey', 'revoke', 'nosuchkey0');
    const created = JSON.parse((await mvr('apikey', 'create', '--label', 'shop', '--json')).stdout) as { key: string; id: string };
    const stored = await client.hGetAll('mvr:api-keys');
    expect(Object.keys(stored)).toContain(created.id);
    // The secret is base64url, so it may itself contain '_': take everything after `mvr_<id>_`.
    expect(JSON.stringify(stored)).not.toContain(created.key.slice(`mvr_${created.id}_`.length));
    expect(JSON.parse(stored[created.id]!)).toMatchObject({
      label: 'shop',
      sha256: createHash('sha256').update(created.key).digest('hex'),
      revoked: null,
    });
    const listed = JSON.parse((await mvr('apikey', 'list', '--json')).stdout) as { id: string; revoked: string | null }[];
    expect(listed.find((k) => k.id === created.id)).toMatchObject({ revoked: null });
    await mvr('apikey', 'revoke', created.id);
    expect(JSON.parse((await client.hGet('mvr:api-keys', created.id))!)).toMatchObject({ revoked: expect.any(String) });
    expect(await unknownRevoke).toMatchObject({ code: 2, stderr: expect.stringMatching(/no API key with id "nosuchkey0"/) });
  });

  it('a new key and a revocation reach every gateway, with no restart', async () => {
    const [a, b] = [await gateway(), await gateway()];
    const table = redisApiKeyTable(client, redis.url);
    const { key, entry } = await createApiKey(table, 'two gateways');
    for (const g of [a, b]) {
      const seen = await poll(
        () => g.verify(GOLD, { key }),
        (r) => r.status === 200,
        UNTIL,
      );
      expect(seen.value.json).toMatchObject({ domain: GOLD });
    }
    await revokeApiKey(table, entry.id);
    for (const g of [a, b]) {
      const refused = await poll(
        () => g.verify(GOLD, { key }),
        (r) => r.status === 401,
        UNTIL,
      );
      expect(refused.value.json).toMatchObject({ code: 'UNAUTHORIZED' });
    }
  });

  it('a key made with `mvr apikey create --redis` works on its first request, on a gateway that would not look by itself', async () => {
    const g = await startTestGateway(project, { redisUrl: redis.url, refreshMs: 60_000 });
    gateways.push(g);
    const { key } = JSON.parse((await mvr('apikey', 'create', '--label', 'at once', '--json')).stdout) as { key: string };
    g.secrets.add(key);
    expect((await g.verify(GOLD, { key })).status).toBe(200);
    // Twenty more back to back, each used at once: each is one read of its own entry, never a reload of every key.
    const reloads = g.gateway.services.apiKeys.counts().reloads;
    const table = redisApiKeyTable(client, redis.url);
    for (let i = 0; i < 20; i++) {
      const made = await createApiKey(table, `back to back ${i}`);
      g.secrets.add(made.key);
      expect((await g.verify(GOLD, { key: made.key })).status, `key ${i}`).toBe(200);
    }
    expect(g.gateway.services.apiKeys.counts().reloads).toBe(reloads);
  });

  it('one quota per key across gateways (within 5%), Redis asked once per lease, not per request', async () => {
    const quota = 300;
    // One clock, stopped, for the three gateways: the whole count falls in one quota window.
    const frozen = Date.now();
    const [a, b, c] = [await gateway(quota, () => frozen), await gateway(quota, () => frozen), await gateway(quota, () => frozen)];
    const { key } = await createApiKey(redisApiKeyTable(client, redis.url), 'quota');
    // Each gateway has the new key once it answers it (three requests of the quota).
    for (const g of [a, b, c])
      await poll(
        () => g.verify(GOLD, { key }),
        (r) => r.status === 200,
        UNTIL,
      );
    await client.configResetStat();
    const statuses: number[] = [];
    const other: string[] = [];
    for (let i = 0; i < 2 * quota; i += 3) {
      for (const r of await Promise.all([a, b, c].map((g) => g.verify(GOLD, { key })))) {
        statuses.push(r.status);
        if (r.status !== 200 && r.status !== 429) other.push(`${r.status} ${r.text}`);
      }
    }
    const allowed = statuses.filter((s) => s === 200).length + 3;
    expect(allowed).toBeLessThanOrEqual(quota);
    expect(allowed).toBeGreaterThanOrEqual(quota * 0.95);
    expect(other).toEqual([]);
    // Leases of 1% of the quota: about 100 asks for the quota, plus the asks that found it used up.
    const evals = Number(/cmdstat_eval:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0);
    expect(evals).toBeGreaterThan(0);
    expect(evals).toBeLessThan(statuses.length / 2);
  });

  it('while Redis is down: known keys keep working, unknown keys are refused, quotas count per gateway; it recovers by itself', async () => {
    const g = await gateway(1000);
    const table = redisApiKeyTable(client, redis.url);
    const { key } = await createApiKey(table, 'outage');
    await poll(
      () => g.verify(GOLD, { key }),
      (r) => r.status === 200,
      UNTIL,
    );
    await redis.stop(true);
    // Once the gateway has found Redis gone (its next key table refresh), not after a fixed wait.
    await waitForLog(g, (l) => l.msg.startsWith('redis unreachable'));
    expect((await g.verify(GOLD, { key })).status).toBe(200);
    expect((await g.verify(GOLD, { key: 'mvr_0123456789_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).status).toBe(401);
    expect(g.logs.some((l) => l.msg.startsWith('redis unreachable'))).toBe(true);
    await redis.start(); // empty: a restarted Redis without persistence
    // The test's own client reconnects by itself; the first write may find it still reconnecting.
    const { value: fresh } = await poll(
      () => createApiKey(redisApiKeyTable(client, redis.url), 'after restart').catch(() => null),
      (created) => created !== null,
      UNTIL,
    );
    const back = await poll(
      () => g.verify(GOLD, { key: fresh!.key }),
      (r) => r.status === 200,
      UNTIL,
    );
    expect(back.value.status).toBe(200);
  });

  it('a snapshot not confirmed for longer than its bound is refused as STORE_UNAVAILABLE', async () => {
    const table = redisApiKeyTable(client, redis.url);
    const { key } = await createApiKey(table, 'bound');
    const store = new ApiKeyStore(table, 50, 400);
    await store.start();
    expect(store.check(`Bearer ${key}`)).toMatch(/^[a-z0-9]{10}$/);
    await redis.stop(true);
    // Refused once the bound has passed with no confirmation (polled, not slept).
    await waitFor(
      () => {
        try {
          store.check(`Bearer ${key}`);
          return false;
        } catch {
          return true;
        }
      },
      'the snapshot to outlive its bound',
      UNTIL.timeoutMs,
    );
    expect(() => store.check(`Bearer ${key}`)).toThrow(expect.objectContaining({ code: 'STORE_UNAVAILABLE' }));
    store.stop();
    await redis.start();
  });

  it("a gateway whose keys Redis has not confirmed for a minute answers STORE_UNAVAILABLE, Redis's address in the log line only", async () => {
    let now = 0;
    const g = await startTestGateway(project, { redisUrl: redis.url, apiKeysClock: () => now });
    gateways.push(g);
    await redis.stop(true);
    // The gateway's look at the keys fails (polled, not slept), and then a minute passes on its clock.
    await waitFor(
      () =>
        g.gateway.services.apiKeys.refresh().then(
          () => false,
          () => true,
        ),
      'a failed look at the keys',
    );
    now += 61_000;
    const r = await g.request(`/v1/verify?domain=${GOLD}`, { authorization: 'Bearer x' });
    expectCauseLogged(g, expectProblem(r, 503, 'STORE_UNAVAILABLE'), [new URL(redis.url).host]);
    await redis.start();
  });
});
