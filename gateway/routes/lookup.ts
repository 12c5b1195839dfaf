import { defineEventHandler } from 'h3';
import { strongEtag } from '../../core/etag.ts';
import { conditionalAnswer, sendAnswer } from '../answer.ts';
import { requireApiKey } from '../auth.ts';
import { cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { pathOf } from '../query.ts';

/** The route's path as the router, the metrics and the OpenAPI document name it: one label for every prefix. */
export const LOOKUP_PREFIX = '/v1/lookup/';

/**
 * `GET /v1/lookup/{prefix}`: a private lookup. Key-gated and counted as one request against the
 * key's quota, as `/v1/verify` (one answer holds a prefix's few hundred records, but it is the same
 * answer for every caller and a CDN keeps it). The caller sends the first hex digits of SHA-256 of
 * the normalized domain; nothing of the request names the domain, so nothing logged can. Cached
 * like a record: the answer changes with the build only (its statement proof's cosignatures with a refresh).
 */
export function lookupRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    await requireApiKey(event, services);
    const prefix = pathOf(event).slice(LOOKUP_PREFIX.length);
    const answer = await services.lookups.answerFor(prefix);
    const bytes = Buffer.from(JSON.stringify(answer));
    const headers = { 'content-type': 'application/json', ...cacheHeaders('/v1/lookup/{prefix}') };
    return sendAnswer(event, conditionalAnswer(event, headers, strongEtag(bytes), bytes));
  });
}
