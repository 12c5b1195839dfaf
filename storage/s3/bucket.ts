import type { AwsClient } from 'aws4fetch';
import { StoreUnavailableError } from '../../core/errors.ts';
import { type HttpMethod, type OriginAnswer, OriginTransport, type OriginTransportOptions } from '../origin-transport.ts';
import type { S3Config, S3Location } from './config.ts';
import type { AwsCredentials } from './credentials.ts';

import { xmlText } from './xml.ts';

export { parseS3Url, type S3Config, type S3Location, s3ConfigFromEnv } from './config.ts';

/**
 * A private bucket, read and written with AWS Signature V4 (aws4fetch signs; the request goes
 * through the {@link OriginTransport}: keep-alive, timeouts, retries with backoff). Keys are
 * relative to the location's prefix. Each request is signed with the credentials the config's
 * source gives at that moment, so refreshed role credentials take over without a restart.
 */
export class S3Bucket {
  /** The signer of the credentials last given (aws4fetch keeps derived signing keys per client). */
  private signer: { credentials: AwsCredentials; client: AwsClient } | null = null;
  private readonly transport: OriginTransport;

  constructor(
    readonly location: S3Location,
    private readonly config: S3Config,
    options: OriginTransportOptions = {},
  ) {
    this.transport = new OriginTransport(options);
  }

  /** `s3://bucket/prefix`, for messages. */
  get name(): string {
    return `s3://${this.location.bucket}/${this.location.prefix}`;
  }

  /**
   * An object (or a range of it, with a `range` header), within the limits its kind of file has
   * (core/limits.ts); `maxBytes` may lower the size limit. Past them, ReadTooLargeError or
   * ReadDeadlineError, unread.
   */
  get(key: string, headers: Record<string, string> = {}, maxBytes?: number): Promise<OriginAnswer> {
    return this.send('GET', key, { headers, maxBytes });
  }

  /** An object's length and ETag (quotes removed); null when there is none. */
  async head(key: string): Promise<{ bytes: number; etag: string } | null> {
    const res = await this.send('HEAD', key);
    if (res.statusCode === 404) return null;
    if (res.statusCode !== 200) throw new StoreUnavailableError(`HEAD ${this.name}/${key} answered ${res.statusCode}`);
    return { bytes: Number(res.headers['content-length']), etag: String(res.headers.etag ?? '').replace(/"/g, '') };
  }

  /**
   * Every object whose key starts with `prefix`, by key relative to the location, with its length
   * and ETag (quotes removed): ListObjects, a request per `pageKeys` keys, each page after the
   * last key of the one before (the marker, which S3-compatible servers all take; ListObjectsV2's
   * continuation tokens are not made by every one of them).
   */
  async list(prefix: string, pageKeys = 1000): Promise<Map<string, { bytes: number; etag: string }>> {
    const base = this.location.prefix ? `${this.location.prefix}/` : '';
    const found = new Map<string, { bytes: number; etag: string }>();
    let marker: string | null = null;
    do {
      const query: Record<string, string> = { prefix: `${base}${prefix}`, 'max-keys': String(pageKeys) };
      if (marker !== null) query.marker = marker;
      const page = (await this.request('GET', null, { query })).body.toString('utf8');
      let last: string | null = null;
      for (const [, entry] of page.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
        last = xmlText(entry!, 'Key');
        if (last?.startsWith(base))
          found.set(last.slice(base.length), {
            bytes: Number(xmlText(entry!, 'Size')),
            etag: (xmlText(entry!, 'ETag') ?? '').replace(/"/g, ''),
          });
      }
      marker = xmlText(page, 'IsTruncated') === 'true' ? (xmlText(page, 'NextMarker') ?? last) : null;
    } while (marker !== null);
    return found;
  }

  async put(key: string, body: Buffer, contentType: string): Promise<void> {
    await this.request('PUT', key, { headers: { 'content-type': contentType }, body });
  }

  /**
   * A request that must answer 2xx (an upload, or a step of a multipart one: ./multipart.ts);
   * any other answer is an error naming the request and quoting the bucket's message.
   */
  async request(
    method: HttpMethod,
    /** The object's key; null for the bucket itself (a listing). */
    key: string | null,
    init: { query?: Record<string, string>; headers?: Record<string, string>; body?: Buffer } = {},
  ): Promise<OriginAnswer> {
    const what = `${method} ${this.name}/${key ?? ''}${init.query ? `?${new URLSearchParams(init.query)}` : ''}`;
    const res = await this.send(method, key, init).catch((error: Error & { statusCode?: number }) => {
      // Retries spent on 5xx answers end in an error that keeps the last status.
      throw new StoreUnavailableError(`${what} ${error.statusCode ? `answered ${error.statusCode}` : `failed: ${error.message}`}`, {
        cause: error,
      });
    });
    if (res.statusCode < 200 || res.statusCode > 299)
      throw new StoreUnavailableError(`${what} answered ${res.statusCode}: ${res.body.toString('utf8').slice(0, 200)}`);
    return res;
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private async send(
    method: HttpMethod,
    key: string | null,
    init: { query?: Record<string, string>; headers?: Record<string, string>; body?: Buffer; maxBytes?: number } = {},
  ): Promise<OriginAnswer> {
    const { headers = {}, body, maxBytes } = init;
    const path =
      key === null
        ? encodeURIComponent(this.location.bucket)
        : [this.location.bucket, ...(this.location.prefix ? this.location.prefix.split('/') : []), ...key.split('/')]
            .map(encodeURIComponent)
            .join('/');
    const query = init.query ? `?${new URLSearchParams(init.query)}` : '';
    // aws4fetch hashes the payload for the signature (x-amz-content-sha256).
    const signed = await (await this.signerNow()).sign(`${this.config.endpoint}/${path}${query}`, {
      method,
      headers,
      body: body as Uint8Array<ArrayBuffer> | undefined,
    });
    return this.transport.send(signed.url, { method, headers: Object.fromEntries(signed.headers), body, path: key ?? '', maxBytes });
  }

  private async signerNow(): Promise<AwsClient> {
    const credentials = await this.config.credentials();
    if (this.signer?.credentials !== credentials) {
      // Loaded with the first request, as the transport's undici is: opening a store reads nothing.
      const { AwsClient } = await import('aws4fetch');
      const { accessKeyId, secretAccessKey, sessionToken } = credentials;
      this.signer = {
        credentials,
        client: new AwsClient({ accessKeyId, secretAccessKey, sessionToken, region: this.config.region, service: 's3' }),
      };
    }
    return this.signer.client;
  }
}
