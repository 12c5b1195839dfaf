/**
 * Budgets before work, on the real gateway, with the key file and with a real redis-server: a
 * request whose key id the gateway's snapshot does not hold pays its address's budget before the
 * id is looked up, so 2,000 made-up ids from one address cost the key table at most that budget
 * (counted by the gateway's own count of looks, exported as `mvr_api_key_lookups_total`, and by
 * Redis's own count of HGET); one id asked by many at once is looked up once, then refused from
 * memory until its time is up or the keys change; and a key created just now works on its first
 * request. The snapshot's own reloads are left to the test (a timer a minute away), and its clock
 * is the test's.
 */
import { hash, randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { type ApiKeyEntry, type ApiKeyTable, apiKeyFile, createApiKey } from '../../access/api-keys.ts';
import { redisApiKeyTable } from '../../access/api-keys-redis.ts';
import { parseTrustedProxies } from '../../access/client-address.ts';
import { connectRedis, type RedisClient } from '../../access/redis.ts';
import { KEY_LOOKUP_LIMITS } from '../../core/limits.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { parseMetrics, sampleOf } from '../support/metrics-text.ts';
import { needing } from '../support/programs.ts';
import { GOLD, makeProject } from '../support/project.ts';
import { REDIS, startRedis, type TestRedis } from '../support/redis-server.ts';

const BUDGET = 20;
const FLOOD = 2_000;
/** The snapshot's own timer, far enough away that only the test reloads it. */
const NEVER_BY_ITSELF = 60_000;

const redisServers: TestRedis[] = [];
afterAll(async () => {
  await cleanup();
  for (const r of redisServers) await r.stop();
});

const madeUpKey = (id = randomBytes(5).toString('hex')) => `mvr_${id}_${randomBytes(32).toString('base64url')}`;
const idOf = (key: string) => key.split('_')[1]!;

interface Table {
  /** The gateway options that put its keys there. */
  options: { redisUrl?: string };
  table: ApiKeyTable;
  /** The key table's reads as the table itself counts them, when it can (Redis's HGET); else null. */
  reads(): Promise<number | null>;
}

async function fileTable(apiKeysFile: string): Promise<Table> {
  return { options: {}, table: apiKeyFile(apiKeysFile), reads: async () => null };
}

async function redisTable(): Promise<Table & { client: RedisClient }> {
  const server = await startRedis();
  redisServers.push(server);
  const client = await connectRedis(server.url);
  return {
    options: { redisUrl: server.url },
    client,
    table: redisApiKeyTable(client, server.url),
    reads: async () => Number(/cmdstat_hget:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0),
  };
}

for (const kind of ['file', 'redis'] as const) {
  describe.skipIf(kind === 'redis' && !REDIS.path)(needing(REDIS, `unknown key ids with the keys in a ${kind}`), () => {
    let g: TestGateway;
    let t: Table;
    let clock = 0;
    /** The looks at the key table, as the gateway's metrics export them. */
    const lookUps = async () => sampleOf(parseMetrics(await (await fetch(g.gateway.metricsUrl!)).text()), 'mvr_api_key_lookups_total');
    const from = (address: string, key: string) => g.verify(GOLD, { key, headers: { 'x-forwarded-for': address } });

    it(`${FLOOD} made-up ids from one address over its budget: ${BUDGET} 401s, then 429s, and at most ${BUDGET} looks at the table`, async () => {
      const project = await makeProject();
      t = kind === 'file' ? await fileTable(project.apiKeysFile) : await redisTable();
      g = await startTestGateway(project, {
        ...t.options,
        unauthenticatedPerMinute: BUDGET,
        trustProxy: parseTrustedProxies('127.0.0.1'),
        refreshMs: NEVER_BY_ITSELF,
        metrics: { listen: { host: '127.0.0.1', port: 0 } },
        apiKeysClock: () => clock,
        now: () => Date.parse('2026-12-01T00:00:00Z'),
      });
      const [looksBefore, readsBefore] = [await lookUps(), await t.reads()];
      const statuses: number[] = [];
      for (let sent = 0; sent < FLOOD; sent += 50)
        statuses.push(...(await Promise.all(Array.from({ length: 50 }, () => from('203.0.113.7', madeUpKey())))).map((r) => r.status));
      expect(statuses.filter((s) => s === 401)).toHaveLength(BUDGET);
      expect(statuses.filter((s) => s === 429)).toHaveLength(FLOOD - BUDGET);
      expect((await lookUps()) - looksBefore).toBeLessThanOrEqual(BUDGET);
      const reads = await t.reads();
      if (reads !== null) expect(reads - readsBefore!).toBeLessThanOrEqual(BUDGET);
    });

    it('a key created just now works on its first request (from an address with budget left)', async () => {
      const { key } = await createApiKey(t.table, 'made just now');
      g.secrets.add(key);
      expect((await from('198.51.100.1', key)).status).toBe(200);
    });

    it('one unknown id asked by a hundred addresses at once is looked up once, then refused from memory until its time is up', async () => {
      const key = madeUpKey();
      const before = await lookUps();
      const asked = await Promise.all(Array.from({ length: 100 }, (_, i) => from(`198.51.100.${i + 10}`, key)));
      expect(asked.map((r) => r.status)).toEqual(Array(100).fill(401));
      expect(await lookUps()).toBe(before + 1);
      expect((await from('198.51.100.200', key)).status).toBe(401);
      expect(await lookUps()).toBe(before + 1);
      clock += KEY_LOOKUP_LIMITS.unknownIdTtlMs + 1;
      expect((await from('198.51.100.201', key)).status).toBe(401);
      expect(await lookUps()).toBe(before + 2);
    });

    it('a key refused while its id was unknown is served once that id is looked up again, the same header included', async () => {
      const key = madeUpKey();
      expect((await from('198.51.100.220', key)).status).toBe(401);
      await t.table.add({
        id: idOf(key),
        label: 'refused first',
        sha256: hash('sha256', key),
        created: new Date().toISOString(),
        revoked: null,
      });
      g.secrets.add(key);
      // The refusal of this very header is remembered (decided once) until the id's time as unknown is up, then looked at again.
      expect((await from('198.51.100.221', key)).status).toBe(401);
      clock += KEY_LOOKUP_LIMITS.unknownIdTtlMs + 1;
      expect((await from('198.51.100.222', key)).status).toBe(200);
      expect((await from('198.51.100.223', key)).status).toBe(200);
    });

    it('an id remembered as unknown is looked up again once a reload finds the keys changed: its key, made since, is served', async () => {
      const key = madeUpKey();
      expect((await from('198.51.100.230', key)).status).toBe(401);
      const entry: ApiKeyEntry = {
        id: idOf(key),
        label: 'its id asked first',
        sha256: hash('sha256', key),
        created: new Date().toISOString(),
        revoked: null,
      };
      await t.table.add(entry);
      g.secrets.add(key);
      // Still remembered as unknown: the gateway has not reloaded.
      expect((await from('198.51.100.231', key)).status).toBe(401);
      // What the snapshot's timer does every refresh interval.
      await g.gateway.services.apiKeys.refresh();
      expect((await from('198.51.100.232', key)).status).toBe(200);
    });
  });
}
