import { resolve } from 'node:path';
import type { ReadDeadlineError, ReadTooLargeError } from '../core/errors/errors.ts';
import { ConfigError } from '../core/errors/errors.ts';
import { FolderStore } from './folder.ts';
import { HttpOriginStore } from './http-origin.ts';
import { S3Bucket } from './s3/bucket.ts';
import { parseS3Url } from './s3/config.ts';
import { S3Store } from './s3/store.ts';
import type { Store } from './store.ts';
import { isHttp, isS3, type StoreSettings } from './url.ts';

export type { StoreSettings };

/** A read refused at its limits (core/limits.ts): its `file` kind, and `limitBytes` or `deadlineMs`. */
export type ReadRefusal = ReadTooLargeError | ReadDeadlineError;

/** The timeouts and retries of bulk transfers. */
const BULK = { timeoutMs: 30_000, retries: 4 };

/**
 * The store at `settings.url`, by its form: `s3://BUCKET/PREFIX` a bucket as `mvr publish` fills it, an
 * http(s) URL an origin serving one build's folder, anything else a records folder. The one place
 * that knows which backend a URL names: a fourth backend is its module and one line here.
 * Nothing is read yet: call `refresh()` before the first lookup.
 */
export function openStore(settings: StoreSettings, hooks: { onReadRefused?: (refusal: ReadRefusal) => void } = {}): Store {
  const { url } = settings;
  const flag = settings.flag ?? '--records';
  const transport = { ...(settings.bulk ? BULK : { timeoutMs: settings.timeoutMs }), deadlineMs: settings.deadlineMs, ...hooks };
  const publicDir = resolve(settings.publicDir ?? 'public');
  if (isS3(url)) {
    if (!settings.s3) throw new ConfigError(`${flag} ${url}: s3:// needs the S3 settings (the standard AWS variables)`);
    return new S3Store(new S3Bucket(parseS3Url(url, flag), settings.s3, transport), { logFreshMs: settings.logFreshMs });
  }
  if (isHttp(url)) return new HttpOriginStore(url, publicDir, transport);
  return new FolderStore(resolve(url), publicDir);
}
