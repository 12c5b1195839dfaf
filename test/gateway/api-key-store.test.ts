/**
 * The gateway's view of the API key file (ApiKeyStore) on real files: a revocation, once a
 * refresh made after it has resolved, is never undone by a load that started before it; and a
 * key made at any rate works on its first check.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../access/api-key-store.ts';
import { createApiKey, revokeApiKey } from '../../access/api-keys.ts';
import { StoreUnavailableError, UnauthorizedError } from '../../core/errors/errors.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function keyFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mvr-keys-'));
  dirs.push(dir);
  return join(dir, 'api-keys.json');
}

describe('ApiKeyStore.refresh', () => {
  it('applies a revocation made during a load: the refresh called after it sees it, and nothing older comes back', async () => {
    for (let round = 0; round < 20; round++) {
      const file = await keyFile();
      const { key, entry } = await createApiKey(file, 'live');
      const store = new ApiKeyStore(file, 60_000);
      await store.refresh();
      expect(store.check(`Bearer ${key}`)).toBe(entry.id);

      const other = await createApiKey(file, 'other'); // changes the file: the next refresh loads it
      const first = store.refresh(); // a load that may read the file before the revocation
      await revokeApiKey(file, entry.id);
      const calledAfter = [store.refresh(), store.refresh(), store.refresh()];
      // While a load runs, later callers share one follow-up load.
      expect(calledAfter[2]).toBe(calledAfter[1]);
      await Promise.all([first, ...calledAfter]);

      expect(() => store.check(`Bearer ${key}`)).toThrow(UnauthorizedError);
      expect(store.check(`Bearer ${other.key}`)).toBe(other.entry.id);
      expect(store.liveKeys).toBe(1);
    }
  });

  it('a refresh with no change reads nothing new and keeps the keys', async () => {
    const file = await keyFile();
    const { key, entry } = await createApiKey(file, 'live');
    const store = new ApiKeyStore(file, 60_000);
    await Promise.all([store.refresh(), store.refresh()]);
    await store.refresh();
    expect(store.check(`Bearer ${key}`)).toBe(entry.id);
    expect(store.liveKeys).toBe(1);
  });

  it('a key accepted before is remembered exactly: a near spelling is refused, and stale keys refuse it too', async () => {
    const file = await keyFile();
    const { key, entry } = await createApiKey(file, 'live');
    let now = 0;
    const store = new ApiKeyStore(file, 60_000, 50, () => now);
    await store.refresh();
    expect(store.check(`Bearer ${key}`)).toBe(entry.id);
    expect(store.check(`bearer  ${key}`)).toBe(entry.id);
    const last = key.at(-1) === 'A' ? 'B' : 'A';
    expect(() => store.check(`Bearer ${key.slice(0, -1)}${last}`)).toThrow(UnauthorizedError);
    expect(() => store.check(`Bearer ${key}x`)).toThrow(UnauthorizedError);
    now = 50;
    expect(store.check(`Bearer ${key}`)).toBe(entry.id); // at the bound: still confirmed
    // Keys not confirmed for longer than the stale bound: refused even though accepted before.
    now = 51;
    expect(() => store.check(`Bearer ${key}`)).toThrow(StoreUnavailableError);
    await store.refresh();
    expect(store.check(`Bearer ${key}`)).toBe(entry.id);
  });

  it('keys made at any rate work at once: twenty made at one instant of its clock, each accepted on its first check', async () => {
    const file = await keyFile();
    const store = new ApiKeyStore(file, 60_000, 60_000, () => 0);
    await store.refresh();
    const before = store.counts().reloads;
    for (let i = 0; i < 20; i++) {
      const { key, entry } = await createApiKey(file, `key ${i}`);
      expect(await store.authenticate(`Bearer ${key}`), `key ${i}`).toBe(entry.id);
    }
    // One read of the file for each change, and none for a made-up id: its version has not moved.
    expect(store.counts().reloads).toBe(before + 20);
    await expect(store.authenticate(`Bearer mvr_0000000000_${'A'.repeat(43)}`)).rejects.toThrow(UnauthorizedError);
    expect(store.counts().reloads).toBe(before + 20);
  });
});
