import { resolve } from 'node:path';
import { z } from 'zod';
import { parseTrustedProxies } from '../access/client-address.ts';
import { ANSWER_LIMITS } from '../core/limits.ts';
import { SCHEMA_SUFFIX } from '../core/rules/record.ts';
import { MULTIPART_RULES } from '../storage/store.ts';
import { storeUrlOf } from '../storage/url.ts';

// Every option of every command, in one table: cli/config.ts resolves and validates them.

// The schemas several options share.
const wholeNumber = (
  min: number,
  max = Number.MAX_SAFE_INTEGER,
  message = min === 0 ? 'must be a whole number (0 turns it off)' : 'must be a positive whole number',
) => z.string().regex(/^\d+$/, message).transform(Number).pipe(z.number().min(min, message).max(max, message));
const folder = z
  .string()
  .min(1)
  .transform((p) => resolve(p));
const optionalText = z.string().min(1).optional();

/** Every option: its flag, its environment variable, its default, what it means, whether its value may hold a secret, and its schema. */
export const OPTIONS = {
  audits: { flag: 'audits', env: 'MVR_AUDITS_DIR', fallback: 'audits', description: 'audits folder', schema: folder },
  records: {
    flag: 'records',
    env: 'MVR_RECORDS_DIR',
    fallback: 'records',
    description: 'records folder; for serve and mcp also an http(s) origin URL or s3://BUCKET/PREFIX, for changes also s3://BUCKET/PREFIX',
    schema: z.string().min(1).transform(storeUrlOf),
  },
  keep: {
    flag: 'keep',
    env: 'MVR_KEEP',
    fallback: '13',
    description: 'builds kept for history and the change feed, the new one included',
    schema: wholeNumber(1),
  },
  to: {
    flag: 'to',
    env: 'MVR_PUBLISH_TO',
    fallback: undefined,
    description: 'where to publish: s3://BUCKET/PREFIX',
    schema: z
      .string()
      .regex(/^s3:\/\/[^/]+/i, 'must be s3://BUCKET/PREFIX')
      .optional(),
  },
  concurrency: {
    flag: 'concurrency',
    env: 'MVR_PUBLISH_CONCURRENCY',
    fallback: '16',
    description: 'publish: requests in flight at once',
    schema: wholeNumber(1, 256, 'must be a whole number from 1 to 256'),
  },
  partMib: {
    flag: 'part-mib',
    env: 'MVR_PUBLISH_PART_MIB',
    fallback: '16',
    description: 'publish: files larger than this many MiB go up in parts of this size (S3 allows 5 to 5120)',
    schema: wholeNumber(
      MULTIPART_RULES.minPartBytes / 1024 ** 2,
      MULTIPART_RULES.maxPartBytes / 1024 ** 2,
      'must be a whole number of MiB from 5 to 5120',
    ),
  },
  redis: {
    flag: 'redis',
    env: 'MVR_REDIS_URL',
    fallback: undefined,
    description: 'Redis or Valkey URL: API keys and rate limits shared by every gateway',
    secret: true,
    schema: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
  },
  public: { flag: 'public', env: 'MVR_PUBLIC_DIR', fallback: 'public', description: 'public folder served by a CDN', schema: folder },
  keys: { flag: 'keys', env: 'MVR_KEYS_DIR', fallback: 'keys', description: 'keys folder', schema: folder },
  apiKeys: {
    flag: 'api-keys',
    env: 'MVR_API_KEYS_FILE',
    fallback: undefined,
    description: 'API key file (default <keys>/api-keys.json)',
    schema: folder.optional(),
  },
  issuer: {
    flag: 'issuer',
    env: 'MVR_ISSUER',
    fallback: 'merchant-verify.example',
    description: 'issuer domain written in records',
    schema: z
      .string()
      .regex(
        /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/,
        'must be a lowercase hostname such as verify.example.com',
      ),
  },
  schemaUrl: {
    flag: 'schema-url',
    env: 'MVR_SCHEMA_URL',
    fallback: undefined,
    description: `record schema URL, ends in ${SCHEMA_SUFFIX} (default https://<issuer>/schemas${SCHEMA_SUFFIX})`,
    schema: z
      .string()
      .regex(/^https?:\/\/\S+$/, 'must be an http(s) URL')
      .refine((v) => URL.canParse(v) && v.endsWith(SCHEMA_SUFFIX), `must be a URL ending in ${SCHEMA_SUFFIX}`)
      .optional(),
  },
  // The gateway's (serve, dev): where it listens, its metrics, cache and limits.
  host: { flag: 'host', env: 'HOST', fallback: '127.0.0.1', description: 'interface to listen on', schema: z.string().min(1) },
  port: {
    flag: 'port',
    env: 'PORT',
    fallback: '8787',
    description: 'port (0 picks a free one)',
    schema: wholeNumber(0, 65535, 'must be a port, 0..65535 (0 picks a free one)'),
  },
  metricsPort: {
    flag: 'metrics-port',
    env: 'MVR_METRICS_PORT',
    fallback: undefined,
    description: 'serve GET /metrics (Prometheus) on this port, apart from the gateway (off when unset; 0 picks a free one)',
    schema: wholeNumber(0, 65535, 'must be a port, 0..65535 (0 picks a free one)').optional(),
  },
  metricsHost: {
    flag: 'metrics-host',
    env: 'MVR_METRICS_HOST',
    fallback: '127.0.0.1',
    description: 'interface the metrics listen on',
    schema: z.string().min(1),
  },
  cacheMb: {
    flag: 'cache-mb',
    env: 'MVR_CACHE_MB',
    fallback: '64',
    description: 'memory for verified records, MB',
    schema: wholeNumber(1),
  },
  rateLimit: {
    flag: 'rate-limit',
    env: 'MVR_RATE_LIMIT',
    fallback: '6000',
    description: 'requests per minute per API key, 0 = off',
    schema: wholeNumber(0),
  },
  unauthRateLimit: {
    flag: 'unauth-rate-limit',
    env: 'MVR_UNAUTH_RATE_LIMIT',
    fallback: '600',
    description: 'requests per minute per client address without a valid key, 0 = off',
    schema: wholeNumber(0),
  },
  streamsPerKey: {
    flag: 'streams-per-key',
    env: 'MVR_STREAMS_PER_KEY',
    fallback: String(ANSWER_LIMITS.streamsPerKey),
    description: 'streamed answers (mirror files) one API key may have open at once in each gateway process',
    schema: wholeNumber(1),
  },
  writeIdleMs: {
    flag: null,
    env: 'MVR_WRITE_IDLE_MS',
    fallback: String(ANSWER_LIMITS.writeIdleMs),
    description: 'ms a client has to take a write (a 256 KiB chunk of a mirror file, an answer) before its connection is cut',
    schema: wholeNumber(1),
  },
  trustProxy: {
    flag: 'trust-proxy',
    env: 'MVR_TRUST_PROXY',
    fallback: undefined,
    description:
      'proxies (CIDRs or addresses, comma-separated) whose Forwarded / X-Forwarded-For names the client for the per-address limit',
    schema: z
      .string()
      .transform((text, ctx) => {
        try {
          return parseTrustedProxies(text);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      })
      .optional(),
  },
  workers: {
    flag: 'workers',
    env: 'MVR_WORKERS',
    fallback: undefined,
    description:
      "serve: gateway processes sharing the port (default 1); build: worker threads (default none up to a MiB of audits, signed on the build's thread; then one per MiB, at most one per core plus one)",
    schema: wholeNumber(1).optional(),
  },
  packRecords: {
    flag: 'pack-records',
    env: 'MVR_PACK_RECORDS',
    fallback: undefined,
    description: 'records a pack holds (default 4096, or more so a build has at most 256 packs)',
    schema: wholeNumber(1).optional(),
  },
  storeTimeoutMs: {
    flag: null,
    env: 'MVR_STORE_TIMEOUT_MS',
    fallback: '2000',
    description: 'ms one request to an http(s) origin or a bucket of records may take before it is retried (serve)',
    schema: wholeNumber(1),
  },
  progressMs: {
    flag: null,
    env: 'MVR_PROGRESS_MS',
    fallback: '5000',
    description: 'ms between progress lines of build, publish and pull when stderr is not a terminal',
    schema: wholeNumber(1),
  },
  publishKeys: {
    flag: 'publish-keys',
    env: 'MVR_PUBLISH_KEYS',
    fallback: undefined,
    description: 'JWK Set file whose public keys stay listed',
    schema: optionalText,
  },
  baseUrl: {
    flag: 'base-url',
    env: 'MVR_BASE_URL',
    fallback: undefined,
    description: 'gateway base URL',
    schema: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  },
  ohttpRelay: {
    flag: 'ohttp-relay',
    env: 'MVR_OHTTP_RELAY',
    fallback: undefined,
    description:
      "an Oblivious HTTP relay URL: private lookups go sealed through it, so the gateway never sees your address beside a prefix; the gateway's key configuration must be the one its build signed (else exit 25)",
    schema: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  },
  apiKey: {
    flag: 'api-key',
    env: 'MVR_API_KEY',
    fallback: undefined,
    description: 'API key for the gateway',
    secret: true,
    schema: optionalText,
  },
  signingKey: {
    flag: null,
    env: 'MVR_SIGNING_KEY',
    fallback: undefined,
    description: 'the active private signing key as a JWK (CI secret)',
    secret: true,
    schema: optionalText,
  },
  logKey: {
    flag: null,
    env: 'MVR_LOG_KEY',
    fallback: undefined,
    description: 'the transparency log private key, PRIVATE+KEY+... (CI secret)',
    secret: true,
    schema: optionalText,
  },
  logVkey: {
    flag: 'log-vkey',
    env: 'MVR_WITNESS_LOG_VKEY',
    fallback: undefined,
    description:
      "file of the logs this witness witnesses, one a line: the log's verifier key, then its origin when that is not the key's name",
    schema: folder.optional(),
  },
  witnessPort: {
    flag: 'port',
    env: 'MVR_WITNESS_PORT',
    // Not the gateway's 8787: a witness runs beside a gateway (`npm start`), never on its port.
    fallback: '8790',
    description: 'port to listen on (0 picks a free one)',
    schema: wholeNumber(0, 65535, 'must be a port, 0..65535 (0 picks a free one)'),
  },
  witnessState: {
    flag: 'state',
    env: 'MVR_WITNESS_STATE',
    fallback: 'witness-state',
    description: "folder of the witness's state (the latest checkpoint it cosigned of each log)",
    schema: folder,
  },
  witnessKey: {
    flag: null,
    env: 'MVR_WITNESS_KEY',
    fallback: undefined,
    description: 'the witness private key, PRIVATE+KEY+... (a secret)',
    secret: true,
    schema: optionalText,
  },
  trustedKeys: {
    flag: 'trusted-keys',
    env: 'MVR_TRUSTED_KEYS',
    fallback: undefined,
    description:
      'the record keys trusted (a JWK Set file, e.g. a copy of the key set): a build or record signed by another key, unless a trusted key endorsed it, is refused; required with s3:// or http(s) records (or --unsigned), default for a folder: its public key set as first read',
    schema: folder.optional(),
  },
  unsigned: {
    flag: null,
    env: 'MVR_UNSIGNED',
    fallback: undefined,
    description: 'serve builds and records that carry no signature (1 or true); the flag is --unsigned',
    schema: z
      .enum(['1', 'true', '0', 'false'], { error: 'must be 1, true, 0 or false' })
      .optional()
      .transform((v) => v === '1' || v === 'true'),
  },
  witnessPolicy: {
    flag: 'witness-policy',
    env: 'MVR_WITNESS_POLICY',
    fallback: undefined,
    description: "tlog-policy file naming the log's witnesses (with submission URLs) and the quorum a checkpoint needs",
    schema: folder.optional(),
  },
} as const;
