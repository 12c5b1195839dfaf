import { ApiKeyStore } from '../access/api-key-store.ts';
import type { ApiKeyTable } from '../access/api-keys.ts';
import { FixedWindowLimiter } from '../access/rate-limit.ts';
import { SharedWindowLimiter } from '../access/rate-limit-shared.ts';
import type { RedisClient as Redis } from '../access/redis.ts';
import { ReadTooLargeError } from '../core/errors/errors.ts';
import { ANSWER_LIMITS, PUBLIC_LIMITS } from '../core/limits.ts';
import { openRecordsStack, type RecordsStack, type RecordsStackOptions } from '../service/records-stack.ts';
import type { ReadRefusal } from '../storage/open.ts';
import type { GatewayOptions, GatewayServices } from './context.ts';
import { accessLogLine } from './json-log.ts';
import type { GatewayMetrics } from './metrics.ts';
import { ConcurrencyBudget } from './public-budget.ts';
import { AnswerWrites } from './streams.ts';

/** How long the start waits for Redis, so the first requests find the keys loaded. */
const REDIS_CONNECT_WAIT_MS = 2000;

/**
 * The gateway's services, opened once: the records stack, the API keys (the key file, or
 * Redis when `redisUrl` is set) and the quotas (per key: local, or shared through the same
 * Redis; per client address: always local). Redis may be down at start: the gateway starts
 * anyway, refuses keyed requests with STORE_UNAVAILABLE until it has read the keys once, and
 * reconnects by itself. The Redis client (node-redis) and the metrics (prom-client) are loaded only
 * when the gateway is given them: each is a large import that every other gateway start would pay.
 */
export async function openGatewayServices(
  opts: GatewayOptions,
  writeIdleMs: number = ANSWER_LIMITS.writeIdleMs,
): Promise<{ services: GatewayServices; close: () => Promise<void> }> {
  const metrics = opts.metrics ? new (await import('./metrics.ts')).GatewayMetrics() : null;
  const shared = opts.redisUrl ? await connectRedis(opts.redisUrl, opts.log) : null;
  const redis = shared?.redis ?? null;
  const apiKeys = new ApiKeyStore(shared?.apiKeys ?? opts.apiKeysFile, opts.refreshMs, undefined, opts.apiKeysClock);
  const {
    records,
    history,
    proofs,
    compact,
    mirror,
    close: closeRecords,
  } = await openRecordsAndKeys(recordsOptions(opts, metrics), apiKeys, redis);
  const services: GatewayServices = {
    issuer: opts.issuer,
    schemaUrl: opts.schemaUrl,
    records,
    history,
    proofs,
    compact,
    mirror,
    apiKeys,
    log: opts.log,
    accessLog: opts.accessLog ?? true,
    logRequest: opts.logRequest ?? ((line) => opts.log(accessLogLine(line))),
    metrics,
    redisUp: redis ? () => redis.isReady : null,
    witnessPolicy: opts.witnessPolicy ?? null,
    ohttpKey: opts.ohttpKey ?? null,
    now: opts.now ?? Date.now,
    publicBudget: new ConcurrencyBudget(PUBLIC_LIMITS.concurrent, PUBLIC_LIMITS.waiting),
    limits: quotas(opts, redis),
    writes: new AnswerWrites(opts.streamsPerKey ?? ANSWER_LIMITS.streamsPerKey, writeIdleMs, opts.log),
    trustedProxies: opts.trustProxy ?? null,
  };
  metrics?.watch(services);
  return {
    services,
    async close() {
      apiKeys.stop();
      await closeRecords();
      await closeRedis(redis);
    },
  };
}

/** The records stack as the gateway opens it: its failures logged and counted. */
function recordsOptions(opts: GatewayOptions, metrics: GatewayMetrics | null): RecordsStackOptions {
  const { log } = opts;
  return {
    store: opts.records,
    refreshMs: opts.refreshMs,
    issuer: opts.issuer,
    schemaUrl: opts.schemaUrl,
    cacheBytes: opts.cacheBytes,
    compactAnswerBytes: opts.compactAnswerBytes,
    now: opts.now,
    onRejected: (domain, reason, kind) => {
      log({ level: 'error', msg: 'record rejected', domain, reason, kind });
      metrics?.recordRejected(kind);
    },
    onStoreRead: metrics ? (outcome) => metrics.storeRead(outcome) : undefined,
    trust: opts.trust,
    onKeysPinned: (kids) =>
      log({
        level: 'info',
        msg: 'record keys pinned from the first key set read (give --trusted-keys to choose them)',
        kids: kids.join(' '),
      }),
    onKeptMapLoad: metrics ? () => metrics.store.keptMapLoaded() : undefined,
    onBuildRefused: ({ build, reason }) => {
      log({ level: 'warn', msg: 'build refused; the build served before (if any) stays served', build, reason });
      metrics?.buildRefused();
    },
    onReadRefused: readRefusals(log, metrics, opts.now ?? Date.now),
    onRefreshSkipped: metrics ? () => metrics.store.refreshSkipped() : undefined,
  };
}

/**
 * Reads refused at their limits: each counted, each kind of file and limit logged once a minute
 * (a hostile store repeats its refusal at every refresh, four times a second).
 */
function readRefusals(log: GatewayOptions['log'], metrics: GatewayMetrics | null, now: () => number) {
  const logged = new Map<string, number>();
  return (refusal: ReadRefusal) => {
    const limit = refusal instanceof ReadTooLargeError ? 'size' : 'deadline';
    metrics?.store.readRefused(refusal.file, limit);
    const key = `${refusal.file} ${limit}`;
    if (now() - (logged.get(key) ?? Number.NEGATIVE_INFINITY) < 60_000) return;
    logged.set(key, now());
    log({ level: 'warn', msg: 'store read refused at its limit; what was served before stays served', file: refusal.file, limit });
  };
}

/**
 * Opens the records and reads the API keys, side by side. A bad key file stops the start; Redis
 * that is not up yet does not (the key store's timer retries). What was opened is closed again
 * when the start fails.
 */
async function openRecordsAndKeys(options: RecordsStackOptions, apiKeys: ApiKeyStore, redis: Redis | null): Promise<RecordsStack> {
  const [stack, keys] = await Promise.allSettled([openRecordsStack(options), apiKeys.start()]);
  const failure = stack.status === 'rejected' ? stack : keys.status === 'rejected' && !redis ? keys : null;
  if (!failure) return (stack as PromiseFulfilledResult<RecordsStack>).value;
  apiKeys.stop();
  if (stack.status === 'fulfilled') await stack.value.close();
  await closeRedis(redis);
  throw failure.reason;
}

/**
 * Connects to Redis, logging when it goes down and comes back; waits a moment for it, but Redis that
 * is down does not stop the start (the client goes on reconnecting). With the API key table in it.
 */
async function connectRedis(url: string, log: GatewayOptions['log']): Promise<{ redis: Redis; apiKeys: ApiKeyTable }> {
  const [{ openRedis, redactUrl }, { redisApiKeyTable }] = await Promise.all([
    import('../access/redis.ts'),
    import('../access/api-keys-redis.ts'),
  ]);
  const where = redactUrl(url);
  let down = false;
  const redis = openRedis(url, (error) => {
    if (!down)
      log({
        level: 'warn',
        msg: 'redis unreachable; known API keys keep working for 60 s, quotas count per gateway',
        redis: where,
        error: error.message,
      });
    down = true;
  });
  redis.on('ready', () => {
    if (down) log({ level: 'info', msg: 'redis reachable again', redis: where });
    down = false;
  });
  const connected = redis.connect().catch(() => undefined);
  await Promise.race([connected, new Promise((resolve) => setTimeout(resolve, REDIS_CONNECT_WAIT_MS).unref())]);
  return { redis, apiKeys: redisApiKeyTable(redis, url) };
}

/** The quotas: per API key (shared through Redis when there is one) and per client address (always local); 0 turns one off. */
function quotas(opts: GatewayOptions, redis: Redis | null): GatewayServices['limits'] {
  const perKey = opts.rateLimitPerMinute ?? 0;
  const perAddress = opts.unauthenticatedPerMinute ?? 0;
  const now = opts.now ?? Date.now;
  return {
    perKey:
      perKey > 0
        ? redis
          ? new SharedWindowLimiter(redis, 'per-key', perKey, 60, undefined, now)
          : new FixedWindowLimiter('per-key', perKey, 60, undefined, now)
        : null,
    perAddress: perAddress > 0 ? new FixedWindowLimiter('unauthenticated', perAddress, 60, undefined, now) : null,
  };
}

async function closeRedis(redis: Redis | null): Promise<void> {
  if (redis?.isOpen) await redis.close().catch(() => redis.destroy());
  else redis?.destroy();
}
