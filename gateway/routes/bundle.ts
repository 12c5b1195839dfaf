import { defineEventHandler } from 'h3';
import { InvalidRequestError } from '../../core/errors/errors.ts';
import { strongEtag } from '../../core/etag.ts';
import { bundleFor } from '../../service/bundles.ts';
import { conditionalAnswer, sendAnswer } from '../answer.ts';
import { cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { domainLookup } from '../query.ts';

/**
 * `GET /v1/bundle?domain=`: the live build's answer for a domain with everything that proves it, in
 * one JSON document a shop can keep and check offline (`service/bundles.ts` makes it). One quota
 * unit, as `/v1/absence`; cached like a record, for the same reasons.
 */
export function bundleRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    const { domain, build } = await domainLookup(event, services);
    // A bundle proves the live answer: its statement must be the newest, which a kept build's is not.
    if (build !== undefined) throw new InvalidRequestError('query parameter "build": a bundle is of the live build only');
    const bundle = await bundleFor(services.records, services.proofs, domain);
    const bytes = Buffer.from(JSON.stringify(bundle));
    const headers = { 'content-type': 'application/json', ...cacheHeaders('/v1/bundle') };
    return sendAnswer(event, conditionalAnswer(event, headers, strongEtag(bytes), bytes));
  });
}
