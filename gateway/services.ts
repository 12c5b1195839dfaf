import { ApiKeyStore } from '../access/api-key-store.ts';
import { redisApiKeyTable } from '../access/api-keys-redis.ts';
import { FixedWindowLimiter } from '../access/rate-limit.ts';
import { SharedWindowLimiter } from '../access/rate-limit-shared.ts';
import { openRecordsService } from '../service/records.ts';
import { BuildHistory } from '../service/history.ts';
import { LogProofs } from '../service/log-proofs.ts';
import { openRedis, redactUrl } from '../access/redis.ts';
import type { GatewayOptions, GatewayServices } from './context.ts';
import { GatewayMetrics } from './metrics.ts';

/**
 * The gateway's services, opened once: the records service, the API keys (the key file, or
 * Redis when `redisUrl` is set) and the quotas (per key: local, or shared through the same
 * Redis; per client address: always local). Redis may be down at start: the gateway starts
 * anyway, refuses keyed requests with STORE_UNAVAILABLE until it has read the keys once, and
 * reconnects by itself.
 */
export async function openGatewayServices(opts: GatewayOptions): Promise<{ services: GatewayServices; close: () => Promise<void> }> {
  const { log } = opts;
  const metrics = opts.metrics ? new GatewayMetrics() : null;
  const records = openRecordsService({
    records: opts.recordsDir,
    s3: opts.s3,
    publicDir: opts.publicDir,
    issuer: opts.issuer,
    schemaUrl: opts.schemaUrl,
    cacheBytes: opts.cacheBytes,
    timeoutMs: opts.storeTimeoutMs,
    now: opts.now,
    onRejected: (domain, reason) => {
      log({ level: 'error', msg: 'record rejected', domain, reason });
      metrics?.recordRejected();
    },
    onStoreRead: metrics ? (outcome) => metrics.storeRead(outcome) : undefined,
    onBuildRefused: ({ build, reason }) => {
      log({ level: 'warn', msg: 'build refused; the build served before (if any) stays served', build, reason });
      metrics?.buildRefused();
    },
  });

  let redis: ReturnType<typeof openRedis> | null = null;
  if (opts.redisUrl) {
    const where = redactUrl(opts.redisUrl);
    let down = false;
    redis = openRedis(opts.redisUrl, (error) => {
      if (!down) log({ level: 'warn', msg: 'redis unreachable; known API keys keep working for 60 s, quotas count per gateway', redis: where, error: error.message });
      down = true;
    });
    redis.on('ready', () => {
      if (down) log({ level: 'info', msg: 'redis reachable again', redis: where });
      down = false;
    });
    // Wait a moment for the connection, so the first requests find the keys loaded; Redis
    // that is down does not stop the start (the client goes on reconnecting).
    const connected = redis.connect().catch(() => undefined);
    await Promise.race([connected, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  }

  const apiKeys = new ApiKeyStore(redis ? redisApiKeyTable(redis, opts.redisUrl!) : opts.apiKeysFile, opts.refreshMs, undefined, opts.apiKeysClock);
  try {
    await Promise.all([records.refresh(), apiKeys.start()]);
  } catch (error) {
    // A bad key file stops the start; Redis that is not up yet does not (the timer retries).
    if (!redis) {
      apiKeys.stop();
      await records.close();
      throw error;
    }
  }

  const perKeyQuota = opts.rateLimitPerMinute ?? 0;
  const perAddressQuota = opts.unauthenticatedPerMinute ?? 0;
  const shared = redis;
  const history = new BuildHistory(records);
  const now = opts.now ?? Date.now;
  const services: GatewayServices = {
    issuer: opts.issuer,
    schemaUrl: opts.schemaUrl,
    records,
    history,
    proofs: new LogProofs(records, history),
    publicDir: opts.publicDir,
    apiKeys,
    log,
    accessLog: opts.accessLog ?? true,
    metrics,
    redisUp: shared ? () => shared.isReady : null,
    limits: {
      perKey: perKeyQuota > 0 ? (shared ? new SharedWindowLimiter(shared, 'per-key', perKeyQuota, 60, undefined, now) : new FixedWindowLimiter('per-key', perKeyQuota, 60, undefined, now)) : null,
      perAddress: perAddressQuota > 0 ? new FixedWindowLimiter('unauthenticated', perAddressQuota, 60, undefined, now) : null,
    },
  };
  metrics?.watch(services);
  return {
    services,
    async close() {
      apiKeys.stop();
      await records.close();
      if (shared?.isOpen) await shared.close().catch(() => shared.destroy());
      else shared?.destroy();
    },
  };
}
