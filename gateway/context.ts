import type { SigningKey } from '../core/signing.ts';
import type { ApiKeyStore } from './api-keys.ts';
import type { RecordStore } from './store/record-store.ts';
import type { FixedWindowLimiter } from './rate-limit.ts';

/** One structured log line (JSON). Never carries an API key or key material. */
export type LogLine = Record<string, unknown> & { level: 'info' | 'warn' | 'error'; msg: string };

/** Everything a route needs, resolved once at start-up. */
export interface GatewayContext {
  issuer: string;
  schemaUrl: string;
  store: RecordStore;
  apiKeys: ApiKeyStore;
  /** Signs never-audited answers when set (opt-in); null by default, so the gateway holds no private key. */
  unverifiedSigner: SigningKey | null;
  log: (line: LogLine) => void;
  /** One log line per request (off with `--quiet`; errors and warnings are logged regardless). */
  accessLog: boolean;
  /** Quotas: per API key, and per client address for requests without a valid key; null = off. */
  limits: { perKey: FixedWindowLimiter | null; perAddress: FixedWindowLimiter | null };
}
