import type { TlogPolicy } from '@merchant-verify/verifier';
import type { ApiKeyStore } from '../access/api-key-store.ts';
import type { TrustedProxies } from '../access/client-address.ts';
import type { RateLimiter } from '../access/rate-limit.ts';
import type { OhttpGatewayKey } from '../core/ohttp.ts';
import type { TrustSettings } from '../core/rules/key-trust.ts';
import type { CompactLookups } from '../service/compact-lookups.ts';
import type { BuildHistory } from '../service/history.ts';
import type { LogProofs } from '../service/log-proofs.ts';
import type { MirrorFiles } from '../service/mirror-files.ts';
import type { RecordsService } from '../service/records.ts';
import type { StoreSettings } from '../storage/open.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { ConcurrencyBudget } from './public-budget.ts';
import type { AnswerWrites } from './streams.ts';

/** One structured log line (JSON). Never carries an API key or key material. */
export type LogLine = Record<string, unknown> & { level: 'info' | 'warn' | 'error'; msg: string };

/** One answered request as its access line says it; every request makes one of this one shape. */
export interface AccessLine {
  method: string;
  /** The path as sent, without the query. */
  path: string;
  status: number;
  /** Milliseconds, rounded to the microsecond. */
  durationMs: number;
  keyId: string | null;
  /** The normalized domain asked about, when there is one. */
  domain: string | undefined;
  /** The error's code, when the answer is a problem document. */
  code: string | undefined;
  /** The id a server failure's answer and log line carry, when there was one. */
  requestId: string | undefined;
}

/** What the gateway's routes use, made once at start-up and passed to {@link createGatewayApp}. */
export interface GatewayServices {
  issuer: string;
  schemaUrl: string;
  records: RecordsService;
  /** The kept builds (a store that keeps none answers BUILD_NOT_FOUND, saying why). */
  history: BuildHistory;
  /** Inclusion proofs of the transparency log, and its public files (a store that keeps no log answers NOT_IN_LOG). */
  proofs: LogProofs;
  /** Compact private lookups (`GET /v1/lookup`, `GET /v1/lookup/{bits}/{hex}`): a bucket's precomputed answer. */
  compact: CompactLookups;
  /** Whole builds, file by file, for mirror-scoped keys (`GET /v1/mirror...`). */
  mirror: MirrorFiles;
  apiKeys: ApiKeyStore;
  /** The turns of the unauthenticated routes that read the store (the log's files and key). */
  publicBudget: ConcurrencyBudget;
  /** Quotas: per API key, and per client address for requests without a valid key; null = off. */
  limits: { perKey: RateLimiter | null; perAddress: RateLimiter | null };
  /** Streams a key holds at once, and the idle deadline of every write to a client. */
  writes: AnswerWrites;
  /** Proxies trusted to name the client (`--trust-proxy`); null: the peer is the client. */
  trustedProxies: TrustedProxies | null;
  log: (line: LogLine) => void;
  /** One log line per request (off with `--quiet`; errors and warnings are logged regardless). */
  accessLog: boolean;
  /** Where access lines go: {@link GatewayOptions.logRequest}, or `log` given each as a log line. */
  logRequest: (line: AccessLine) => void;
  /** Prometheus metrics; null when off (the default). */
  metrics: GatewayMetrics | null;
  /** Whether the connection to Redis is ready; null without Redis. */
  redisUp: (() => boolean) | null;
  /** The witness policy (`--witness-policy`): served to the verify page, and the MCP tools say when the log was last witnessed; null without. */
  witnessPolicy: WitnessPolicyFile | null;
  /** The Oblivious HTTP key; null when the gateway takes no encapsulated requests (`/.well-known/ohttp-gateway` is then 404). */
  ohttpKey: OhttpGatewayKey | null;
  /** The clock (epoch ms). */
  now: () => number;
}

/** A tlog-policy file as read: its text (served as it is) and what it says. */
export interface WitnessPolicyFile {
  text: string;
  policy: TlogPolicy;
}

/** What a request's handling learned, for its access log line. */
export interface RequestNote {
  /** The pattern of the route that took the request (a metrics label); unset for an unknown path. */
  route?: string;
  keyId?: string;
  domain?: string;
  errorCode?: string;
  /** Made at the request's first server failure: its answer, its log line and its access line carry it. */
  requestId?: string;
}

declare module 'h3' {
  // A request's note lives on the h3 event's context.
  interface H3EventContext extends RequestNote {}
}

/** How `startGateway` is configured (the CLI resolves it from flags and environment). */
export interface GatewayOptions {
  /**
   * The records store and how to reach it (`cli/config.ts` resolves it): a folder laid out by
   * `mvr build` with its public folder, the http(s) base URL of an origin serving one build's
   * folder, or `s3://BUCKET/PREFIX`, with the per-request timeout of an origin or a bucket.
   */
  records: StoreSettings;
  /** The API key file, used without `redisUrl`. */
  apiKeysFile: string;
  /** Redis or Valkey holding the API keys and the per-key quota counts, shared by every gateway. */
  redisUrl?: string;
  issuer: string;
  schemaUrl: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Bound on verified record bytes held in memory. */
  cacheBytes: number;
  /** Bound on compact answer bytes held in memory (default CACHE_LIMITS.compactAnswerBytes; tests lower it). */
  compactAnswerBytes?: number;
  /** How often the live build, key set and API keys are re-checked. */
  refreshMs: number;
  log: (line: LogLine) => void;
  /** One log line per request; default true. */
  accessLog?: boolean;
  /**
   * Where access lines go, when not to `log`: `mvr serve` hands them to its JSON log, which writes
   * each as text without turning it into a log line object first (`JsonLog.request` in `gateway/json-log.ts`).
   */
  logRequest?: (line: AccessLine) => void;
  /**
   * Prometheus metrics, off when absent: served by this process on their own listener, or (a
   * process of `--workers`) handed to the cluster's primary, which serves every process's together.
   */
  metrics?: { listen: { host: string; port: number } } | { toClusterPrimary: true };
  /** Requests per minute per API key; 0 or absent turns the quota off (`mvr serve` defaults to 6000). */
  rateLimitPerMinute?: number;
  /** Requests per minute per client address without a valid key; 0 or absent turns it off (`mvr serve` defaults to 600). */
  unauthenticatedPerMinute?: number;
  /** Streamed answers (mirror files) one API key may have open at once in this process (`--streams-per-key`); ANSWER_LIMITS.streamsPerKey by default. */
  streamsPerKey?: number;
  /** Proxies whose `Forwarded` / `X-Forwarded-For` names the client a request without a valid key is counted as (`--trust-proxy`); none by default. */
  trustProxy?: TrustedProxies;
  /** Slow-client limits of the HTTP server (defaults in `gateway/server.ts`); tests shorten them instead of waiting seconds. */
  connectionTimeouts?: Partial<ConnectionTimeouts>;
  /** The clock never-audited answers are issued by and quota windows counted by (epoch ms); `Date.now` by default, a test's own clock in tests. */
  now?: () => number;
  /** The record keys trusted (pinned; unset: a records folder pins the first key set read, a bucket or an origin refuses to start) and whether unsigned builds are served (not unless set). */
  trust?: TrustSettings;
  /** A tlog-policy of the log's witnesses: the MCP tools say when the answers were last witnessed, and the verify page gets it. */
  witnessPolicy?: WitnessPolicyFile;
  /** The Oblivious HTTP key (`--ohttp-key`): the gateway is then also an Oblivious Gateway Resource. */
  ohttpKey?: OhttpGatewayKey;
  /** The clock the API keys' staleness is timed by (ms); `performance.now` by default, a test's own in tests. */
  apiKeysClock?: () => number;
}

/** How long node:http lets a client take, in milliseconds (see `gateway/server.ts`). */
export interface ConnectionTimeouts {
  /** The whole request head must arrive within this (408 and close otherwise). */
  headersMs: number;
  /** The whole request, body included, must arrive within this. */
  requestMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number;
  /** A client that has not taken a write within this long has its connection cut (ANSWER_LIMITS.writeIdleMs by default). */
  writeIdleMs: number;
}
