import { AwsClient } from 'aws4fetch';
import { ConfigError } from '../core/errors.ts';
import { OriginTransport, type OriginAnswer, type OriginTransportOptions } from './sources/origin-transport.ts';

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

/** Whether a `--records` or `--to` value names object storage. */
export const isS3Url = (value: string) => /^s3:\/\//i.test(value);

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

/**
 * A private bucket, read and written with AWS Signature V4 (aws4fetch signs; the request goes
 * through the {@link OriginTransport}: keep-alive, timeouts, retries with backoff). Keys are
 * relative to the location's prefix.
 */
export class S3Bucket {
  private readonly signer: AwsClient;
  private readonly transport: OriginTransport;

  constructor(
    readonly location: S3Location,
    private readonly config: S3Config,
    options: OriginTransportOptions = {},
  ) {
    this.signer = new AwsClient({ accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey, sessionToken: config.sessionToken, region: config.region, service: 's3' });
    this.transport = new OriginTransport(options);
  }

  /** `s3://bucket/prefix`, for messages. */
  get name(): string {
    return `s3://${this.location.bucket}/${this.location.prefix}`;
  }

  get(key: string, headers: Record<string, string> = {}): Promise<OriginAnswer> {
    return this.send('GET', key, headers);
  }

  async put(key: string, body: Buffer, contentType: string): Promise<void> {
    const res = await this.send('PUT', key, { 'content-type': contentType }, body);
    if (res.statusCode !== 200) throw new Error(`PUT ${this.name}/${key} answered ${res.statusCode}: ${res.body.toString('utf8').slice(0, 200)}`);
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private async send(method: 'GET' | 'PUT', key: string, headers: Record<string, string>, body?: Buffer): Promise<OriginAnswer> {
    const path = [this.location.bucket, ...(this.location.prefix ? this.location.prefix.split('/') : []), ...key.split('/')].map(encodeURIComponent).join('/');
    // aws4fetch hashes the payload for the signature (x-amz-content-sha256).
    const signed = await this.signer.sign(`${this.config.endpoint}/${path}`, { method, headers, body: body as Uint8Array<ArrayBuffer> | undefined });
    return this.transport.send(signed.url, { method, headers: Object.fromEntries(signed.headers), body });
  }
}
