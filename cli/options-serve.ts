import { z } from 'zod';
import { parseTrustedProxies } from '../access/client-address.ts';
import { ANSWER_LIMITS } from '../core/limits.ts';
import { wholeNumber } from './option-schemas.ts';

// The gateway's own options (serve, dev): where it listens, its metrics, cache and limits. Part of
// the one option table (cli/options.ts).

export const SERVE_OPTIONS = {
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
} as const;
