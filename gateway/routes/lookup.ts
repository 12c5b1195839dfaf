import { defineEventHandler } from 'h3';
import { strongEtag } from '../../core/etag.ts';
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
 * `GET /v1/lookup/{prefix}` (JSON, every record of a hex prefix) and `GET /v1/lookup/{bits}/{hex}`
 * (compact: a bucket's map entries, as the build wrote them): private lookups. Key-gated and
 * counted as one request against the key's quota, as `/v1/verify`: the same answer for every
 * caller, which a CDN keeps, and a compact one is smaller than a record may be. Nothing of the
 * request names the domain, so nothing logged can. A compact answer is sent as its bytes are
 * (identity, `no-transform`), so every answer of a build is one size on the wire.
 */
export function lookupRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    await requireApiKey(event, services);
    const path = pathOf(event).slice(LOOKUP_PREFIX.length);
    const slash = path.indexOf('/');
    if (slash >= 0) {
      const { bytes, etag } = await services.compact.answer(path.slice(0, slash), path.slice(slash + 1));
      const headers = { 'content-type': COMPACT_ANSWER_TYPE, ...cacheHeaders('/v1/lookup/{bits}/{hex}') };
      return sendAnswer(event, conditionalAnswer(event, headers, etag, bytes));
    }
    const answer = await services.lookups.answerFor(path);
    const bytes = Buffer.from(JSON.stringify(answer));
    const headers = { 'content-type': 'application/json', ...cacheHeaders('/v1/lookup/{prefix}') };
    return sendAnswer(event, conditionalAnswer(event, headers, strongEtag(bytes), bytes));
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
