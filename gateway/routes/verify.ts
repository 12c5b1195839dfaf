import { defineEventHandler, type H3Event } from 'h3';
import type { ServedRecord } from '../../service/records.ts';
import { conditionalAnswer, sendAnswer } from '../answer.ts';
import type { GatewayServices } from '../context.ts';
import { domainLookup } from '../query.ts';

/** The same for every 200 and 304 of the record endpoint: 60 s for clients, 300 s for shared caches. */
export const RECORD_CACHE_CONTROL = 'public, max-age=60, s-maxage=300';

/**
 * `GET /v1/verify?domain=`: the key first (401 before 400), then the domain, then the records
 * service's answer: the stored record's exact bytes, or the never-audited record.
 */
export function verifyRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    const { domain, build } = await domainLookup(event, services);
    if (build === undefined) return sendRecord(event, await services.records.recordFor(domain));
    return sendRecord(event, await services.history.recordIn(build, domain));
  });
}

/** A record answer: JSON, the record endpoint's cache headers, its entity tag, 304 on a match. */
export function sendRecord(event: H3Event, record: ServedRecord): Promise<void> {
  const headers = { 'content-type': 'application/json', 'cache-control': RECORD_CACHE_CONTROL, vary: 'Authorization' };
  return sendAnswer(event, conditionalAnswer(event, headers, record.etag, record.bytes));
}

