import { defineEventHandler } from 'h3';
import { strongEtag } from '../../core/etag.ts';
import { conditionalAnswer, sendAnswer } from '../answer.ts';
import { cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { domainLookup } from '../query.ts';

/**
 * `GET /v1/absence?domain=[&build=]`: the proof that a domain has no record in the live build (or
 * a kept one): the build's signed statement and the two leaves of its domain map around the
 * domain's hash, with their inclusion paths. A domain that has a record is 404 HAS_RECORD. Cached
 * like a record: the proof changes with the build, and its checkpoint's cosignatures with a refresh.
 */
export function absenceRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    const { domain, build } = await domainLookup(event, services);
    const proof = await services.proofs.absenceFor(domain, build);
    const bytes = Buffer.from(JSON.stringify(proof));
    const headers = { 'content-type': 'application/json', ...cacheHeaders('/v1/absence') };
    return sendAnswer(event, conditionalAnswer(event, headers, strongEtag(bytes), bytes));
  });
}
