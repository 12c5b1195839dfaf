import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { liveRecords } from '../support/outputs.ts';
import { replaceLiveRecord } from '../support/packs.ts';
import { makeProject, type Project } from '../support/project.ts';

const DOMAIN = 'acme-outdoor.example';
const SMALL_CACHE = 4096;

let project: Project;

beforeAll(async () => {
  project = await makeProject();
});
afterAll(cleanup);

async function cacheStats(g: TestGateway): Promise<{ entries: number; bytes: number; limit: number }> {
  const r = await g.request('/healthz', { key: null });
  expect(r.status).toBe(200);
  return r.json.cache;
}

/** What one cached copy of DOMAIN counts for, measured on a fresh gateway with one request. */
async function singleEntryBytes(): Promise<number> {
  const g = await startTestGateway(project, { cacheBytes: SMALL_CACHE });
  try {
    expect((await g.verify(DOMAIN)).status).toBe(200);
    const stats = await cacheStats(g);
    expect(stats).toMatchObject({ entries: 1, limit: SMALL_CACHE });
    return stats.bytes;
  } finally {
    await g.close();
  }
}

describe('verified-record cache', () => {
  it('caches a served record once, and a repeat is a hit (no growth)', async () => {
    const g = await startTestGateway(project, { cacheBytes: SMALL_CACHE });
    try {
      expect(await cacheStats(g)).toEqual({ entries: 0, bytes: 0, limit: SMALL_CACHE });
      await g.verify(DOMAIN);
      const once = await cacheStats(g);
      expect(once.entries).toBe(1);
      expect(once.bytes).toBeGreaterThan(0);
      for (let i = 0; i < 5; i++) await g.verify(DOMAIN);
      expect(await cacheStats(g)).toEqual(once);
      // Never-audited answers are not cached as records.
      await g.verify('never-audited-cache.example');
      expect(await cacheStats(g)).toEqual(once);
    } finally {
      await g.close();
    }
  });

  it('stays within its byte bound while serving every record', async () => {
    const g = await startTestGateway(project, { cacheBytes: SMALL_CACHE });
    try {
      const records = await liveRecords(project);
      for (const [domain, bytes] of records) {
        const r = await g.verify(domain);
        expect(r.bytes.equals(bytes)).toBe(true);
        const stats = await cacheStats(g);
        expect(stats.bytes).toBeLessThanOrEqual(SMALL_CACHE);
      }
      const stats = await cacheStats(g);
      expect(stats.entries).toBeGreaterThan(0);
      expect(stats.entries).toBeLessThan(records.size);
    } finally {
      await g.close();
    }
  });

  it('evicts records not asked for again before records that were (second chance), without reordering on hits', async () => {
    // Its own project: records are overwritten in their pack below. What is cached is seen from outside:
    // a cached record is still answered after it is spoiled in its pack, an evicted one is read again
    // and refused (503 UNAVAILABLE).
    const own = await makeProject();
    const domains = [...(await liveRecords(own)).keys()].sort();
    const single = await singleEntryBytes();
    // Room for about three records (entries differ a little in size with the domain's length).
    const g = await startTestGateway(own, { cacheBytes: Math.floor(single * 3.5) });
    const spoil = (domain: string) => replaceLiveRecord(own, domain, '{"spoiled":true}');
    try {
      const [hot, cold, ...others] = domains as [string, string, ...string[]];
      expect(others.length).toBeGreaterThanOrEqual(3);
      expect((await g.verify(hot)).status).toBe(200); // oldest entry
      expect((await g.verify(cold)).status).toBe(200);
      expect((await g.verify(hot)).status).toBe(200); // a hit: marked, not moved
      // Two misses overflow the cache: `hot` is the oldest but was asked for again, so it gets
      // a second chance; `cold` was not, and goes.
      for (const d of others.slice(0, 2)) expect((await g.verify(d)).status).toBe(200);
      await spoil(hot);
      await spoil(cold);
      expect((await g.verify(hot)).status).toBe(200);
      const again = await g.verify(cold);
      expect(again.status).toBe(503);
      expect(again.json.code).toBe('UNAVAILABLE');
      expect((await cacheStats(g)).bytes).toBeLessThanOrEqual(Math.floor(single * 3.5));
    } finally {
      await g.close();
    }
  });

  it('counts a record once when concurrent requests miss on it together', async () => {
    const single = await singleEntryBytes();
    const g = await startTestGateway(project, { cacheBytes: SMALL_CACHE });
    try {
      const replies = await Promise.all(Array.from({ length: 20 }, () => g.verify(DOMAIN)));
      expect(replies.every((r) => r.status === 200)).toBe(true);
      expect(await cacheStats(g)).toEqual({ entries: 1, bytes: single, limit: SMALL_CACHE });
      // And the cache still caches afterwards.
      await g.verify('gadget-hub.example');
      expect((await cacheStats(g)).entries).toBe(2);
    } finally {
      await g.close();
    }
  });
});
