import { defineEventHandler } from 'h3';
import { NotFoundError } from '../../core/errors/errors.ts';
import { conditionalAnswer, sendAnswer } from '../answer.ts';
import { requireApiKey } from '../auth.ts';
import { cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { pathOf } from '../query.ts';

/** The route's path as the router, the metrics and the OpenAPI document name it: one label for every prefix. */
export const LOOKUP_PREFIX = '/v1/lookup/';

/** A compact answer's media type: bytes, never text a proxy may rewrite. */
export const COMPACT_ANSWER_TYPE = 'application/octet-stream';

/**
 * `GET /v1/lookup/{bits}/{hex}`: a private lookup, a bucket's map entries as the build wrote them.
 * Key-gated and counted as one request against the key's quota, as `/v1/verify`: the same answer
 * for every caller, which a CDN keeps, and smaller than a record may be. Nothing of the request
 * names the domain, so nothing logged can. The answer is sent as its bytes are (identity,
 * `no-transform`), so every answer of a build is one size on the wire.
 */
export function lookupRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    const path = pathOf(event).slice(LOOKUP_PREFIX.length);
    const slash = path.indexOf('/');
    // Only `{bits}/{hex}` is a lookup here: any other path under the prefix is unknown, before any key is charged.
    if (slash < 0) throw new NotFoundError(pathOf(event));
    await requireApiKey(event, services);
    const { bytes, etag } = await services.compact.answer(path.slice(0, slash), path.slice(slash + 1));
    const headers = { 'content-type': COMPACT_ANSWER_TYPE, ...cacheHeaders('/v1/lookup/{bits}/{hex}') };
    return sendAnswer(event, conditionalAnswer(event, headers, etag, bytes));
  });
}

/**
 * `GET /v1/lookup`: the live build's statement and its log proof, which a private client fetches
 * first: it says how many bits a bucket has (`lookup.bits`) and every answer is checked against it.
 */
export function lookupHeadRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    await requireApiKey(event, services);
    const { bytes, etag } = await services.compact.head();
    const headers = { 'content-type': 'application/json', ...cacheHeaders('/v1/lookup') };
    return sendAnswer(event, conditionalAnswer(event, headers, etag, bytes));
  });
}
