/**
 * The verified-record cache, observed from outside through GET /healthz (`cache: {entries,
 * bytes, limit}`): bounded by `cacheBytes`, and counting each record it holds once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, liveRecords, makeProject, startTestGateway, type TestGateway, type TestProject } from './helpers.ts';

const DOMAIN = 'acme-outdoor.example';
const SMALL_CACHE = 4096;

let project: TestProject;

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
