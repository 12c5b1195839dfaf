import { createClient } from '@redis/client';
import { StoreUnavailableError } from '../core/errors.ts';

/**
 * A Redis or Valkey connection (node-redis) for API keys and rate limits. Commands fail at once
 * while the connection is down (no offline queue), so a gateway falls back to its local rules
 * instead of waiting; the client reconnects by itself, backing off up to 2 s. A server that
 * stops answering is noticed by the socket timeout (the gateway asks every 250 ms).
 */
export function openRedis(url: string, onError: (error: Error) => void = () => undefined) {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 2000,
      socketTimeout: 5000,
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000),
    },
  });
  // Without a listener, an 'error' event (a refused reconnect) would end the process.
  client.on('error', onError);
  return client;
}

export type RedisClient = ReturnType<typeof openRedis>;

/** Connects; rejects (STORE_UNAVAILABLE, naming the server without its password) when it cannot be reached (for one-shot commands). */
export async function connectRedis(url: string): Promise<RedisClient> {
  const client = openRedis(url);
  const attempt = client.connect();
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new StoreUnavailableError('no answer within 5 s')), 5000).unref(),
  );
  try {
    await Promise.race([attempt, timeout]);
  } catch (error) {
    client.destroy();
    throw new StoreUnavailableError(`cannot reach Redis at ${redactUrl(url)}: ${(error as Error).message}`, { cause: error });
  }
  return client;
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'redis://(unparseable URL)';
  }
}
