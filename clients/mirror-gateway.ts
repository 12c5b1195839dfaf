import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { FetchFailedError } from '../core/errors/errors.ts';
import { LOG_VKEY_PATH } from '../core/layout.ts';
import { READ_LIMITS, readLimitOf } from '../core/limits.ts';
import { rangeBody, rangeHeader } from '../core/ranges.ts';
import { type BoundedAnswer, boundedGet } from './bounded-get.ts';

/** What `GET /v1/mirror` names: the live build and its signed statement. */
export interface MirrorHead {
  build: string;
  statement: unknown;
}

/**
 * A gateway's mirror routes, for `mvr mirror --from URL`: `GET /v1/mirror` (the live build), `GET
 * /v1/mirror/builds/{build}/{file}` (a build's files, packs in ranges), with an API key of the
 * mirror scope; and the public key set, log tiles and log key. Every read is bounded by its kind
 * of file (core/limits.ts); a redirect, an answer past its limits or an unexpected status is
 * FETCH_FAILED naming it, and 404 is "no such file".
 */
export function mirrorGateway(baseUrl: string, apiKey: string, timeoutMs = 30_000) {
  const base = baseUrl.replace(/\/+$/, '');
  // What messages and the mirror's own record name: never a password a URL may carry.
  const shown = new URL(base);
  shown.username = '';
  shown.password = '';
  const name = shown.href.replace(/\/+$/, '');
  const auth = { authorization: `Bearer ${apiKey}` };
  const get = async (path: string, kind: { bytes: number; deadlineMs: number }, headers: Record<string, string> = {}) => {
    const res = await boundedGet(`${base}${path}`, { limit: kind, timeoutMs, headers });
    if (res.statusCode === 401 || res.statusCode === 403)
      throw new FetchFailedError(
        `${name}${path} answered ${res.statusCode}: the API key is ${res.statusCode === 401 ? 'not a live key' : 'not allowed to mirror (create one with "mvr apikey create --scope mirror")'}`,
        res.statusCode,
      );
    return res;
  };
  const body = (res: BoundedAnswer, url: string): Buffer | null => {
    if (res.statusCode === 404) return null;
    if (res.statusCode !== 200 && res.statusCode !== 206) throw new FetchFailedError(`${url} answered ${res.statusCode}`, res.statusCode);
    return res.body;
  };
  const buildPath = (build: string, file: string) => `/v1/mirror/builds/${encodeURIComponent(build)}/${file}`;
  return {
    name,
    async head(): Promise<MirrorHead> {
      const res = await get('/v1/mirror', READ_LIMITS.gatewayAnswer, { ...auth, accept: 'application/json' });
      const bytes = body(res, `${name}/v1/mirror`);
      let head: Partial<MirrorHead> | null = null;
      try {
        head = bytes && (JSON.parse(bytes.toString('utf8')) as Partial<MirrorHead>);
      } catch {
        // named below
      }
      if (typeof head?.build !== 'string') throw new FetchFailedError(`${name}/v1/mirror did not name a live build`);
      return { build: head.build, statement: head.statement };
    },
    /** A build's file, of at most `maxBytes` (its kind's limit at most): AnswerTooLargeError past it. */
    async readFile(build: string, file: string, maxBytes = readLimitOf(file).bytes): Promise<Buffer | null> {
      const path = buildPath(build, file);
      const limit = readLimitOf(file);
      return body(await get(path, { ...limit, bytes: Math.min(limit.bytes, maxBytes) }, auth), `${name}${path}`);
    },
    async readRange(build: string, file: string, start: number, length: number): Promise<Buffer | null> {
      const path = buildPath(build, file);
      const res = await get(
        path,
        { ...readLimitOf(file), bytes: Math.min(readLimitOf(file).bytes, length) },
        { ...auth, ...rangeHeader(start, length) },
      );
      if (![200, 206, 416].includes(res.statusCode)) return body(res, `${name}${path}`);
      // Only the range asked for, as an origin's or a bucket's answer is held to (core/ranges.ts).
      return rangeBody(res, start, length, `${name}${path}`);
    },
    async keySet(): Promise<Buffer> {
      const bytes = body(await get(KEY_SET_PATH, READ_LIMITS.keySet), `${name}${KEY_SET_PATH}`);
      if (!bytes) throw new FetchFailedError(`${name}${KEY_SET_PATH} answered 404`, 404);
      return bytes;
    },
    async logFile(path: string): Promise<Buffer | null> {
      return body(await get(`/log/${path}`, readLimitOf(path)), `${name}/log/${path}`);
    },
    async logVkey(): Promise<Buffer | null> {
      return body(await get(LOG_VKEY_PATH, READ_LIMITS.logVkey), `${name}${LOG_VKEY_PATH}`);
    },
  };
}
