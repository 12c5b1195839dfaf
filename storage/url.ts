import { resolve } from 'node:path';
import { parseS3Url, s3ConfigFromEnv, type S3Config } from './s3/config.ts';

// What a store URL names, apart from the backends (storage/open.ts), so the CLI reads its settings
// without loading them.

/** A store URL as configuration keeps it: a folder made absolute (a process may change directory), a URL as given. */
export function storeUrlOf(url: string): string {
  return isS3(url) || isHttp(url) ? url : resolve(url);
}

/** The settings a store at `url` reads from the environment (the standard AWS variables for s3://), checked now. */
export function storeSettingsFromEnv(url: string, env: Record<string, string | undefined>, flag = '--records'): { s3?: S3Config } {
  if (!isS3(url)) return {};
  parseS3Url(url, flag);
  return { s3: s3ConfigFromEnv(env) };
}

export const isS3 = (url: string) => /^s3:\/\//i.test(url);
export const isHttp = (url: string) => /^https?:\/\//i.test(url);
