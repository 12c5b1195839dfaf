import { defineEventHandler, type H3Event } from 'h3';
import { NotFoundError } from '../../core/errors/errors.ts';
import { quotaUnitsOf } from '../../core/limits.ts';
import { requestedRange } from '../../core/ranges.ts';
import { isMirrorFile, MIRROR_CHUNK_BYTES, type MirrorFile } from '../../service/mirror-files.ts';
import { matchesIfNoneMatch, sendAnswer } from '../answer.ts';
import { chargeQuota, requireMirrorKey } from '../auth.ts';
import { cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { pathOf } from '../query.ts';

/** The route's path as the router and the metrics name it: every build's every file under one label. */
export const MIRROR_BUILDS_PREFIX = '/v1/mirror/builds/';

/** `GET /v1/mirror`: the live build's id and its signed statement, which lists every pack with its hash and length. */
export function mirrorRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    await requireMirrorKey(event, services);
    const live = await services.mirror.live();
    const headers = { 'content-type': 'application/json', ...cacheHeaders('/v1/mirror') };
    return sendAnswer(event, { status: 200, headers, body: JSON.stringify({ build: live.build, statement: live.statement }) });
  });
}

/**
 * `GET /v1/mirror/builds/{build}/{file}`: a file of a live or kept build, whole or one byte range
 * (`Range: bytes=a-b`, `a-` or `-n`: 206, a suffix longer than the file all of it; none of the file's bytes: 416), sent as it is read from
 * the store a chunk at a time, each written when the client has taken the last: a pack of any size
 * costs a chunk of memory. A file name the route does not serve, and a file the build lacks, are
 * 404 NOT_FOUND; a build the store does not keep, 404 BUILD_NOT_FOUND. The answer holds one of
 * the key's stream slots until it closes (TOO_MANY_STREAMS past them), and costs the key one quota
 * unit per MiB it sends (quotaUnitsOf), paid before its first byte (RATE_LIMITED).
 */
export function mirrorFileRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    const keyId = await requireMirrorKey(event, services);
    const path = pathOf(event);
    const rest = path.slice(MIRROR_BUILDS_PREFIX.length);
    const slash = rest.indexOf('/');
    const build = rest.slice(0, slash);
    const name = rest.slice(slash + 1);
    if (slash <= 0 || !isMirrorFile(name)) throw new NotFoundError(path);
    // Taken before the store is asked: a key's streams bound its reads of the store too.
    services.writes.openStream(keyId, event.node.res);
    const file = await services.mirror.open(build, name);
    if (!file) throw new NotFoundError(path);
    return sendFile(event, file, services, keyId);
  });
}

/** The whole file (200), one range of it (206), or 304 when If-None-Match names its tag. */
async function sendFile(event: H3Event, file: MirrorFile, services: GatewayServices, keyId: string): Promise<void> {
  const req = event.node.req;
  const headers = {
    'content-type': file.contentType,
    ...cacheHeaders('/v1/mirror/builds/{build}/{file}'),
    etag: file.etag,
    'accept-ranges': 'bytes',
  };
  if (matchesIfNoneMatch(req.headers['if-none-match'], file.etag)) return sendAnswer(event, { status: 304, headers, body: null });
  const range = requestedRange(req.headers.range, file.size);
  const [start, end] = range ?? [0, file.size - 1];
  // Paid up front, from the length asked for, while a refusal can still be a clean 429: the
  // request's one unit was paid at the gate, the rest of the bytes' units here.
  const units = quotaUnitsOf(event.method === 'HEAD' ? 0 : end + 1 - start);
  if (units > 1) await chargeQuota(event, services, keyId, units - 1);
  // The first chunk is read before any header is set: a store that fails then gets a clean problem answer.
  const first = event.method === 'HEAD' || end < start ? null : await file.read(start, Math.min(MIRROR_CHUNK_BYTES, end + 1 - start));
  const res = event.node.res;
  res.statusCode = range ? 206 : 200;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (range) res.setHeader('content-range', `bytes ${start}-${end}/${file.size}`);
  res.setHeader('content-length', end - start + 1);
  // Past the first chunk a failure cuts the connection (the app's error path): the client sees fewer bytes than promised.
  // A client that has not taken a chunk within the idle deadline is cut (services.writes): the loop ends at once.
  for (let chunk = first, at = start; chunk; ) {
    at += chunk.length;
    const taken = services.writes.write(res, chunk);
    if (taken !== true && !(await taken)) return;
    chunk = at <= end && !res.destroyed ? await file.read(at, Math.min(MIRROR_CHUNK_BYTES, end + 1 - at)) : null;
  }
  res.end();
}
