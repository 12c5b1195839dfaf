import { defineEventHandler, getRequestHeader, type H3Event } from 'h3';
import { InvalidRequestError, UnsupportedMediaTypeError } from '../../core/errors/errors.ts';
import { batchDomains, lookupBatch } from '../../service/batch.ts';
import { sendAnswer } from '../answer.ts';
import { authenticate, chargeQuota } from '../auth.ts';
import { readBody } from '../body.ts';
import { cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { noteWithheld, problemAnswer } from '../problem.ts';

/**
 * `POST /v1/verify/batch`, `{"domains": [...]}` (1 to 100): `{"results": [...]}` in order, each
 * `{"domain": <as sent>, "record": <record>}` with the very bytes `GET /v1/verify` serves, or
 * `{"domain", "problem": <problem document>}`. The key first (401), then the media type (415),
 * the size (413) and the shape (400); each domain counts once against the key's quota, and a
 * refused batch counts as one request.
 */
export function batchRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    const keyId = await authenticate(event, services);
    let domains: string[];
    try {
      domains = await requestedDomains(event);
    } catch (error) {
      // A refused batch costs one request, as a refused single lookup does (and 429 past the quota).
      await chargeQuota(event, services, keyId, 1);
      throw error;
    }
    await chargeQuota(event, services, keyId, domains.length);
    const results = await lookupBatch(domains, async (domain) => (await services.records.recordFor(domain)).bytes);
    // Records go in as their bytes, so each is exactly what the single lookup answers: the
    // answer is written, not serialized from a value (its shape is batchAnswerSchema's).
    const parts = results.map(
      (r) =>
        `{"domain":${JSON.stringify(r.domain)},${'record' in r ? `"record":${r.record.toString('utf8')}` : `"problem":${problemAnswer(r.problem, services.issuer, noteWithheld(event, services, r.problem, r.domain)).body}`}}`,
    );
    return sendAnswer(event, {
      status: 200,
      headers: { 'content-type': 'application/json', ...cacheHeaders('/v1/verify/batch') },
      body: `{"results":[${parts.join(',')}]}`,
    });
  });
}

/** The body's domains: JSON (415 otherwise), within the size limit (413), of the batch's shape (400). */
async function requestedDomains(event: H3Event): Promise<string[]> {
  const type = getRequestHeader(event, 'content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type))
    throw new UnsupportedMediaTypeError(`Content-Type must be application/json, not "${type || '(none)'}"`);
  let body: unknown;
  try {
    body = JSON.parse((await readBody(event)).toString('utf8'));
  } catch (error) {
    if (error instanceof SyntaxError) throw new InvalidRequestError(`the body is not JSON: ${error.message}`);
    throw error;
  }
  return batchDomains(body);
}
