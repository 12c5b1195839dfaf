import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ApiKeyStore } from '../access/api-key-store.ts';
import type { RateLimiter } from '../access/rate-limit.ts';
import type { CompactLookups } from '../service/compact-lookups.ts';
import type { BuildHistory } from '../service/history.ts';
import type { RecordsService, RejectionKind, StoreReadOutcome } from '../service/records.ts';
import { storeMetrics } from './metrics-store.ts';

/** What the metrics read from the gateway's services at each scrape. */
export interface WatchedServices {
  records: Pick<RecordsService, 'health'>;
  compact: Pick<CompactLookups, 'stats'>;
  history: Pick<BuildHistory, 'builds'> | null;
  apiKeys: Pick<ApiKeyStore, 'counts'>;
  limits: { perKey: RateLimiter | null; perAddress: RateLimiter | null };
  /** The answer writes' counts (gateway/streams.ts). */
  writes: { readonly idleCuts: number; readonly refused: number; readonly openStreams: number };
  redisUp: (() => boolean) | null;
}

/** One label set of `mvr_requests_total` and the requests answered with it. */
interface AnsweredCount {
  labels: Partial<Record<'route' | 'method' | 'status' | 'code', string | number>>;
  count: number;
}

/** A route and method's duration histogram and its answers' counts, by status, then error code ('' for none). */
interface RequestSlot {
  timer: { observe(seconds: number): void };
  counts: Map<number, Map<string, AnsweredCount>>;
}

/** Request durations, seconds: a hot record takes well under a millisecond, a store read over the network more. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * The gateway's Prometheus metrics (prom-client), named `mvr_*` in base units, beside prom-client's
 * default process and Node.js metrics. Two kinds of source:
 * - pushed: each finished request (the app's one request hook) and each store read (the records
 *   service's `onStoreRead`) are counted here as they happen;
 * - pulled: what the services already count for themselves as it happens (the verified cache's
 *   hits and misses, the limiters' refusals, the API key store's reloads) and their state (the
 *   live build, Redis) are read at each scrape, so no request pays for them.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  /**
   * Requests answered, per label set, as plain numbers handed to `mvr_requests_total` at each
   * scrape: prom-client's own `inc` (labels validated and hashed) was about 2 us a request.
   */
  private readonly answered: AnsweredCount[] = [];
  /**
   * Each route and method's counts and duration histogram, found without making a label key per
   * request (a string made and hashed for every answer): by route, then method, then status and code.
   */
  private readonly slots = new Map<string, Map<string, RequestSlot>>();
  private readonly requests: Counter<'route' | 'method' | 'status' | 'code'> = new Counter({
    name: 'mvr_requests_total',
    help: 'HTTP requests answered, by route (the pattern, or "unmatched"), method, status and error code (absent on success).',
    labelNames: ['route', 'method', 'status', 'code'] as const,
    registers: [this.registry],
    collect: () => {
      this.requests.reset();
      for (const { labels, count } of this.answered) this.requests.inc(labels, count);
    },
  });
  private readonly durations = new Histogram({
    name: 'mvr_request_duration_seconds',
    help: 'Time from the request head to the last byte of the answer handed to the kernel, by route and method.',
    labelNames: ['route', 'method'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly storeReads = new Counter({
    name: 'mvr_store_reads_total',
    help: "Reads of a record from the store (the verified cache missed), by outcome: found, missing (the build's map lists it, the store has no file) or the error code; a never-audited domain is decided by the map, without a read.",
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly rejected = new Counter({
    name: 'mvr_records_rejected_total',
    help: "Stored records refused, after one retry, by kind: serve_rule (corrupt, another domain, wrong shape, signature not verifying) or not_in_map (not the record its build's map commits to: another record of the domain put in its place).",
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  private readonly buildsRefused = new Counter({
    name: 'mvr_builds_refused_total',
    help: 'Builds found live and refused whole (statement or domain map not checking against the key set, read again once); the build served before stays served.',
    registers: [this.registry],
  });

  /** Reads refused at the store's limits, refresh ticks skipped, whole kept maps read. */
  readonly store = storeMetrics(this.registry);

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which `promtool check metrics` refuses; each is the sum of the
    // labelled gauge of the same name without `_total`, which stays.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
      this.registry.removeSingleMetric(name);
  }

  /** One answered request. */
  request(route: string, method: string, status: number, code: string | undefined, seconds: number): void {
    let byMethod = this.slots.get(route);
    if (!byMethod) this.slots.set(route, (byMethod = new Map()));
    let slot = byMethod.get(method);
    // The duration histogram bound to each route and method once (`labels()`), so an observation skips checking its labels.
    if (!slot) byMethod.set(method, (slot = { timer: this.durations.labels({ route, method }), counts: new Map() }));
    let byCode = slot.counts.get(status);
    if (!byCode) slot.counts.set(status, (byCode = new Map()));
    const answered = byCode.get(code ?? '');
    if (answered) answered.count++;
    else {
      const count = { labels: code ? { route, method, status, code } : { route, method, status }, count: 1 };
      byCode.set(code ?? '', count);
      this.answered.push(count);
    }
    slot.timer.observe(seconds);
  }

  /** One read from the store. */
  storeRead(outcome: StoreReadOutcome): void {
    this.storeReads.inc({ outcome });
  }

  /** One stored record refused, and why. */
  recordRejected(kind: RejectionKind): void {
    this.rejected.inc({ kind });
  }

  /** One build refused. */
  buildRefused(): void {
    this.buildsRefused.inc();
  }

  /** Registers the metrics read from the services at each scrape. */
  watch(services: WatchedServices): void {
    const r = [this.registry];
    const cache = () => services.records.health().cache;
    pulledCounter(r, 'mvr_verified_cache_hits_total', 'Record lookups answered from the verified cache.', () => cache().hits);
    pulledCounter(
      r,
      'mvr_verified_cache_misses_total',
      'Record lookups the verified cache could not answer (read from the store, or a known absence).',
      () => cache().misses,
    );
    pulledGauge(r, 'mvr_verified_cache_bytes', 'Bytes of verified records held in memory.', () => cache().bytes);
    pulledGauge(r, 'mvr_verified_cache_entries', 'Verified records held in memory.', () => cache().entries);
    pulledGauge(r, 'mvr_verified_cache_limit_bytes', 'The bound on the verified cache (--cache-mb).', () => cache().limit);
    const compact = () => services.compact.stats();
    pulledGauge(
      r,
      'mvr_lookup_compact_answers_bytes',
      "Bytes of the live build's compact lookup answers held in memory (each its build's one size).",
      () => compact().bytes,
    );
    pulledGauge(
      r,
      'mvr_lookup_compact_answers_entries',
      "The live build's compact lookup answers held in memory.",
      () => compact().answers,
    );
    pulledGauge(
      r,
      'mvr_lookup_compact_answers_limit_bytes',
      'The bound on the compact lookup answers held (CACHE_LIMITS.compactAnswerBytes).',
      () => compact().limitBytes,
    );
    pulledGauge(
      r,
      'mvr_store_up',
      '1 while the live build and its key set can be read, else 0.',
      () => (services.records.health().records.ok && services.records.health().keySet.ok ? 1 : 0),
      'min',
    );
    new Counter({
      name: 'mvr_rate_limit_refusals_total',
      help: 'Requests refused for a quota, by policy: per-key, or unauthenticated (per client address, without a valid key).',
      labelNames: ['policy'] as const,
      registers: r,
      collect() {
        this.reset();
        for (const limiter of [services.limits.perKey, services.limits.perAddress])
          if (limiter) this.inc({ policy: limiter.policy.name }, limiter.refusals);
      },
    });
    pulledCounter(
      r,
      'mvr_write_idle_cuts_total',
      'Connections cut because their client did not take a write within the idle deadline (MVR_WRITE_IDLE_MS).',
      () => services.writes.idleCuts,
    );
    pulledCounter(
      r,
      'mvr_streams_refused_total',
      'Streamed answers (mirror files) refused TOO_MANY_STREAMS: their key held all its streams in this process (--streams-per-key).',
      () => services.writes.refused,
    );
    pulledGauge(
      r,
      'mvr_streams_open',
      'Streamed answers (mirror files) being written now, all keys together.',
      () => services.writes.openStreams,
    );
    const keys = () => services.apiKeys.counts();
    pulledCounter(
      r,
      'mvr_api_key_reloads_total',
      'Loads of the API keys that found them changed (the first load included).',
      () => keys().reloads,
    );
    pulledCounter(
      r,
      'mvr_api_key_reload_failures_total',
      'Checks of the API keys that could not read them (Redis or the key file).',
      () => keys().reloadFailures,
    );
    pulledCounter(
      r,
      'mvr_api_key_lookups_total',
      'Looks at the API keys (Redis or the key file) for a key id the snapshot did not hold, each paid by its address first; one per id at a time.',
      () => keys().lookUps,
    );
    pulledGauge(r, 'mvr_api_keys_live', 'API keys that are not revoked, as last loaded.', () => keys().liveKeys, 'max');
    if (services.redisUp)
      pulledGauge(r, 'mvr_redis_up', '1 while the connection to Redis is ready, else 0.', () => (services.redisUp!() ? 1 : 0), 'min');
    watchBuild(r, services);
  }

  /** The metrics in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** Hands this process's metrics to the cluster's primary, which serves every process's together (see {@link clusterMetrics}). */
  reportToClusterPrimary(): void {
    AggregatorRegistry.setRegistries([this.registry]);
    // Constructing one installs the listener that answers the primary's requests.
    new AggregatorRegistry();
  }
}

/** In the cluster's primary: every worker's metrics, summed (or as each metric's aggregator says), in the text format. */
export function clusterMetrics(): () => Promise<string> {
  const aggregator = new AggregatorRegistry();
  return () => aggregator.clusterMetrics();
}

type Registers = Registry[];
type Aggregator = 'sum' | 'min' | 'max' | 'first';

/** A counter counted elsewhere (a plain number kept by whatever sees the event), read at each scrape. */
function pulledCounter(registers: Registers, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers,
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/** A gauge read at each scrape; `aggregator` says how the processes of a cluster combine (default: summed). */
function pulledGauge(registers: Registers, name: string, help: string, read: () => number, aggregator: Aggregator = 'sum'): void {
  new Gauge({
    name,
    help,
    registers,
    aggregator,
    collect() {
      this.set(read());
    },
  });
}

/** The live build (an info gauge: its id as a label, value 1) and its age from its `issued_at`; absent when no build history is readable. */
function watchBuild(registers: Registers, services: WatchedServices): void {
  const live = async () => (services.history ? (await services.history.builds().catch(() => []))[0] : undefined);
  new Gauge({
    name: 'mvr_build_info',
    help: 'The live build: its id in the "build" label, value 1.',
    labelNames: ['build'] as const,
    registers,
    aggregator: 'max',
    async collect() {
      this.reset();
      const build = await live();
      if (build) this.set({ build: build.id }, 1);
    },
  });
  new Gauge({
    name: 'mvr_build_age_seconds',
    help: 'Seconds since the live build (its id in the "build" label) was issued (its issued_at).',
    labelNames: ['build'] as const,
    registers,
    aggregator: 'max',
    async collect() {
      this.reset();
      const build = await live();
      if (build) this.set({ build: build.id }, (Date.now() - Date.parse(build.issued_at)) / 1000);
    },
  });
}
