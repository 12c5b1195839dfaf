import { StoreUnavailableError } from '../../core/errors.ts';
import { BUILD_ID, LIVE_POINTER_OBJECT } from '../../core/layout.ts';
import type { S3Bucket } from './bucket.ts';

/** Reads the body of `live.json`: `{"build": "<id>", ...}`. */
export function parseLivePointer(body: Buffer): string {
  let build: unknown;
  try {
    build = (JSON.parse(body.toString('utf8')) as { build?: unknown }).build;
  } catch {
    throw new StoreUnavailableError(`${LIVE_POINTER_OBJECT} is not JSON`);
  }
  if (typeof build !== 'string' || !BUILD_ID.test(build)) throw new StoreUnavailableError(`${LIVE_POINTER_OBJECT} names no valid build id`);
  return build;
}

/** The build `live.json` names in a bucket; null when nothing is published there yet. */
export async function liveBuildOf(bucket: S3Bucket): Promise<string | null> {
  const res = await bucket.get(LIVE_POINTER_OBJECT);
  if (res.statusCode === 404) return null;
  if (res.statusCode !== 200) throw new StoreUnavailableError(`${bucket.name}/${LIVE_POINTER_OBJECT} answered ${res.statusCode}`);
  return parseLivePointer(res.body);
}
