import { ConfigError } from '../core/errors/errors.ts';
import type { ApiKeyEntry, ApiKeyTable } from './api-keys.ts';
import { type RedisClient, redactUrl } from './redis.ts';

/** The hash of entries (field: key id, value: the entry as JSON: the key's SHA-256 (never the key), label, dates, scopes). */
const ENTRIES = 'mvr:api-keys';
/** Incremented with every change, in the same transaction, so gateways reload only when it moves. */
const VERSION = 'mvr:api-keys:version';

/** API keys in Redis or Valkey, shared by every gateway and by `mvr apikey --redis`. */
export function redisApiKeyTable(redis: RedisClient, url: string): ApiKeyTable {
  const name = `${redactUrl(url)} (${ENTRIES})`;
  const write = async (entry: ApiKeyEntry) => {
    await redis.multi().hSet(ENTRIES, entry.id, JSON.stringify(entry)).incr(VERSION).exec();
  };
  return {
    name,
    version: async () => (await redis.get(VERSION)) ?? '0',
    entries: async () => (await redis.hVals(ENTRIES)).map((text) => JSON.parse(text) as ApiKeyEntry),
    entry: async (id) => {
      const text = await redis.hGet(ENTRIES, id);
      return text ? (JSON.parse(text) as ApiKeyEntry) : null;
    },
    add: write,
    revoke: async (id, at) => {
      const text = await redis.hGet(ENTRIES, id);
      if (!text) throw new ConfigError(`no API key with id "${id}" in ${name}`);
      const entry = JSON.parse(text) as ApiKeyEntry;
      entry.revoked ??= at;
      await write(entry);
      return entry;
    },
  };
}
