import { ConfigError } from '../core/errors.ts';

// The S3 settings, apart from the client (service/s3.ts), so the CLI reads them without loading it.

/** A bucket and a key prefix, from `s3://BUCKET/PREFIX`. */
export interface S3Location {
  bucket: string;
  /** No leading or trailing slash; may be empty. */
  prefix: string;
}

/** Credentials, region and endpoint: the standard AWS variables, read by the CLI ({@link s3ConfigFromEnv}). */
export interface S3Config {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  /** Scheme, host and port; the bucket goes in the path (path-style addressing). */
  endpoint: string;
}

/** Parses `s3://BUCKET/PREFIX` (the prefix may be empty). */
export function parseS3Url(url: string, what = '--records'): S3Location {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/i.exec(url);
  if (!m) throw new ConfigError(`${what} ${url}: not s3://BUCKET/PREFIX with a valid bucket name`);
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((part) => part === '.' || part === '..')) throw new ConfigError(`${what} ${url}: the prefix may not hold "." or ".." segments`);
  return { bucket: m[1]!.toLowerCase(), prefix };
}

/**
 * The S3 settings from the standard AWS variables: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN, AWS_REGION (or AWS_DEFAULT_REGION; us-east-1), and AWS_ENDPOINT_URL_S3 or
 * AWS_ENDPOINT_URL (an S3-compatible server; AWS's regional endpoint otherwise).
 */
export function s3ConfigFromEnv(env: NodeJS.ProcessEnv): S3Config {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) throw new ConfigError('s3:// needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
  const endpoint = (env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || `https://s3.${region}.amazonaws.com`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+$/i.test(endpoint)) throw new ConfigError(`AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL ${endpoint}: not an http(s) origin (scheme, host and port only)`);
  return { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined, region, endpoint };
}
