import type { ApiKeyStore } from '../service/api-keys.ts';
import type { FixedWindowLimiter } from '../service/rate-limit.ts';
import type { RecordsService } from '../service/records.ts';

/** One structured log line (JSON). Never carries an API key or key material. */
export type LogLine = Record<string, unknown> & { level: 'info' | 'warn' | 'error'; msg: string };

/** What the gateway's routes use, made once at start-up and passed to {@link createGatewayApp}. */
export interface GatewayServices {
  issuer: string;
  schemaUrl: string;
  records: RecordsService;
  apiKeys: ApiKeyStore;
  /** Quotas: per API key, and per client address for requests without a valid key; null = off. */
  limits: { perKey: FixedWindowLimiter | null; perAddress: FixedWindowLimiter | null };
  log: (line: LogLine) => void;
  /** One log line per request (off with `--quiet`; errors and warnings are logged regardless). */
  accessLog: boolean;
}

/** What a request's handling learned, for its access log line. */
export interface RequestNote {
  keyId?: string;
  domain?: string;
  errorCode?: string;
}

declare module 'h3' {
  // A request's note lives on the h3 event's context.
  interface H3EventContext extends RequestNote {}
}
