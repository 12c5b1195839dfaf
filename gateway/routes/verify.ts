import { defineEventHandler, type H3Event } from 'h3';
import type { ServedRecord } from '../../service/records.ts';
import { type ConditionalAnswers, conditionalAnswers, pickConditional, sendAnswer } from '../answer.ts';
import { cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { type DomainLookup, domainLookup } from '../query.ts';

/**
 * `GET /v1/verify?domain=`: the key first (401 before 400), then the domain, then the records
 * service's answer: the stored record's exact bytes, or the never-audited record. A record in
 * memory is answered in the same turn as the request (nothing awaited unless something must be).
 */
export function verifyRoute(services: GatewayServices) {
  return defineEventHandler((event) => {
    const lookup = domainLookup(event, services);
    if (lookup instanceof Promise) return lookup.then((l) => answerLookup(event, services, l));
    return answerLookup(event, services, lookup);
  });
}

function answerLookup(event: H3Event, services: GatewayServices, { domain, build }: DomainLookup): void | Promise<void> {
  const record = build === undefined ? services.records.recordFor(domain) : services.history.recordIn(build, domain);
  if (record instanceof Promise) return record.then((r) => sendRecord(event, r));
  return sendRecord(event, record);
}

const RECORD_HEADERS = Object.freeze({ 'content-type': 'application/json', ...cacheHeaders('/v1/verify') });
/** Each record's answers, made at its first request and kept as long as the record is (a cached record's, as long as the cache keeps it). */
const answersOf = new WeakMap<ServedRecord, ConditionalAnswers>();

/** A record answer: JSON, the record endpoint's cache headers, its entity tag, 304 on a match. */
export function sendRecord(event: H3Event, record: ServedRecord): void | Promise<void> {
  let answers = answersOf.get(record);
  if (!answers) answersOf.set(record, (answers = conditionalAnswers(RECORD_HEADERS, record.etag, record.bytes)));
  return sendAnswer(event, pickConditional(event, answers));
}
