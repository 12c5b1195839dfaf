import { ConfigError } from '../../core/errors/errors.ts';
import { type CredentialSource, credentialsFromEnv } from './credentials.ts';

// The S3 settings, apart from the client (./bucket.ts), so the CLI resolves them without loading it.

/** A bucket and a key prefix, from `s3://BUCKET/PREFIX`. */
export interface S3Location {
  bucket: string;
  /** No leading or trailing slash; may be empty. */
  prefix: string;
}

/** Credentials, region and endpoint: the standard AWS settings, resolved from the environment ({@link s3ConfigFromEnv}) into a store's settings. */
export interface S3Config {
  /** Asked before each request: static keys, or the AWS provider chain, refreshed as they near expiry. */
  credentials: CredentialSource;
  region: string;
  /** Scheme, host and port; the bucket goes in the path (path-style addressing). */
  endpoint: string;
}

/** Parses `s3://BUCKET/PREFIX` (the prefix may be empty). */
export function parseS3Url(url: string, what = '--records'): S3Location {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/i.exec(url);
  if (!m) throw new ConfigError(`${what} ${url}: not s3://BUCKET/PREFIX with a valid bucket name`);
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((part) => part === '.' || part === '..'))
    throw new ConfigError(`${what} ${url}: the prefix may not hold "." or ".." segments`);
  return { bucket: m[1]!.toLowerCase(), prefix };
}

/**
 * The S3 settings from the standard AWS settings: credentials as {@link credentialsFromEnv} finds
 * them (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, else AWS_PROFILE, web identity, container or
 * instance credentials), AWS_REGION (or AWS_DEFAULT_REGION; us-east-1), and AWS_ENDPOINT_URL_S3 or
 * AWS_ENDPOINT_URL (an S3-compatible server; AWS's regional endpoint otherwise).
 */
export function s3ConfigFromEnv(env: NodeJS.ProcessEnv): S3Config {
  const credentials = credentialsFromEnv(env);
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
  const endpoint = (env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || `https://s3.${region}.amazonaws.com`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+$/i.test(endpoint))
    throw new ConfigError(`AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL ${endpoint}: not an http(s) origin (scheme, host and port only)`);
  return { credentials, region, endpoint };
}
