import { resolve } from 'node:path';
import { parseS3Url, type S3Config, s3ConfigFromEnv } from './s3/config.ts';

// What a store URL names and what opening it takes, apart from the backends (storage/open.ts), so
// the CLI resolves its settings without loading them.

/**
 * Where a store is and how to reach it: the one settings type, resolved by the CLI from its flags
 * and the environment ({@link storeSettingsFromEnv}) and opened by `openStore`. Only storage/
 * looks at the backend's part.
 */
export interface StoreSettings {
  /** A records folder laid out by `mvr build`, the http(s) base URL of an origin serving one build's folder, or `s3://BUCKET/PREFIX`. */
  url: string;
  /** The public folder `mvr build` writes (key set, log files), read with a folder or an http(s) origin (default `public`). */
  publicDir?: string;
  /** Credentials, region and endpoint, for s3:// (from the standard AWS variables). */
  s3?: S3Config;
  /** How long one request to an http(s) origin or a bucket may take before it is retried (ms; 2 s by default, 30 s for bulk transfers). */
  timeoutMs?: number;
  /** Shortens the total deadline of every read from an http(s) origin or a bucket below the limits table's (core/limits.ts; ms); tests set a short one. */
  deadlineMs?: number;
  /** How long a bucket's log checkpoint and partial tiles are served from memory (ms; core/limits.ts has the default). */
  logFreshMs?: number;
  /** For bulk transfers (`mvr publish`, `mvr pull`): longer timeouts and more retries than a gateway's lookups, since one slow object of many must not fail all. */
  bulk?: boolean;
  /** The flag the URL came from, for messages (default `--records`). */
  flag?: string;
}

/** A store URL as configuration keeps it: a folder made absolute (a process may change directory), a URL as given. */
export function storeUrlOf(url: string): string {
  return isS3(url) || isHttp(url) ? url : resolve(url);
}

/** The settings of the store at `url`: `how` to reach it, and what its backend reads from the environment (the standard AWS variables for s3://), checked now. */
export function storeSettingsFromEnv(
  url: string,
  env: Record<string, string | undefined>,
  how: Omit<StoreSettings, 'url' | 's3'> = {},
): StoreSettings {
  if (!isS3(url)) return { ...how, url };
  parseS3Url(url, how.flag ?? '--records');
  return { ...how, url, s3: s3ConfigFromEnv(env) };
}

export const isS3 = (url: string) => /^s3:\/\//i.test(url);
export const isHttp = (url: string) => /^https?:\/\//i.test(url);
