import { defineEventHandler, type H3Event } from 'h3';
import type { ServedRecord } from '../../service/records.ts';
import { type ConditionalAnswers, conditionalAnswers, pickConditional, sendAnswer } from '../answer.ts';
import { cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { domainLookup } from '../query.ts';

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

const RECORD_HEADERS = Object.freeze({ 'content-type': 'application/json', ...cacheHeaders('/v1/verify') });
/** Each record's answers, made at its first request and kept as long as the record is (a cached record's, as long as the cache keeps it). */
const answersOf = new WeakMap<ServedRecord, ConditionalAnswers>();

/** A record answer: JSON, the record endpoint's cache headers, its entity tag, 304 on a match. */
export function sendRecord(event: H3Event, record: ServedRecord): void {
  let answers = answersOf.get(record);
  if (!answers) answersOf.set(record, (answers = conditionalAnswers(RECORD_HEADERS, record.etag, record.bytes)));
  sendAnswer(event, pickConditional(event, answers));
}
