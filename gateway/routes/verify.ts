import { defineEventHandler, type H3Event } from 'h3';
import { normalizeDomain } from '../../core/domain.ts';
import { InvalidDomainError } from '../../core/errors.ts';
import type { ServedRecord } from '../../service/records.ts';
import { conditionalAnswer, sendAnswer } from '../answer.ts';
import { requireApiKey } from '../auth.ts';
import type { GatewayServices } from '../context.ts';

/** The same for every 200 and 304 of the record endpoint: 60 s for clients, 300 s for shared caches. */
export const RECORD_CACHE_CONTROL = 'public, max-age=60, s-maxage=300';

/**
 * `GET /v1/verify?domain=`: the key first (401 before 400), then the domain, then the records
 * service's answer: the stored record's exact bytes, or the never-audited record.
 */
export function verifyRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    await requireApiKey(event, services);
    const domain = domainParameter(event);
    event.context.domain = domain;
    return sendRecord(event, await services.records.recordFor(domain));
  });
}

/** A record answer: JSON, the record endpoint's cache headers, its entity tag, 304 on a match. */
export function sendRecord(event: H3Event, record: ServedRecord): Promise<void> {
  const headers = { 'content-type': 'application/json', 'cache-control': RECORD_CACHE_CONTROL, vary: 'Authorization' };
  return sendAnswer(event, conditionalAnswer(event, headers, record.etag, record.bytes));
}

/** Exactly one `domain` query parameter, normalized; errors name the query parameter. */
function domainParameter(event: H3Event): string {
  const target = event.node.req.originalUrl ?? event.node.req.url ?? '/';
  const q = target.indexOf('?');
  const values = new URLSearchParams(q < 0 ? '' : target.slice(q + 1)).getAll('domain');
  if (values.length === 0) throw new InvalidDomainError('query parameter "domain" is required');
  if (values.length > 1) throw new InvalidDomainError(`query parameter "domain" is given ${values.length} times; give it once`);
  try {
    return normalizeDomain(values[0]);
  } catch (error) {
    throw new InvalidDomainError(`query parameter "domain": ${(error as Error).message}`);
  }
}
