import { defineEventHandler } from 'h3';
import type { ChangesPage, HistoryAnswer, KeptBuilds } from '../../core/schemas/history.ts';
import { type Answer, sendAnswer } from '../answer.ts';
import { requireApiKey } from '../auth.ts';
import { type CachedRoute, cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { domainParameter, queryOf, queryParameter } from '../query.ts';

/** A 200 with a JSON body of the route's wire format. */
function json<Body extends KeptBuilds | HistoryAnswer | ChangesPage>(route: CachedRoute, body: Body): Answer {
  return { status: 200, headers: { 'content-type': 'application/json', ...cacheHeaders(route) }, body: JSON.stringify(body) };
}

/** `GET /v1/builds`: the kept builds, newest first; the first is the live one. */
export function buildsRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    await requireApiKey(event, services);
    const builds = (await services.history.builds()).map(({ id, issued_at, records }) => ({ id, issued_at, records }));
    return sendAnswer(event, json<KeptBuilds>('/v1/builds', { builds }));
  });
}

/** `GET /v1/history?domain=`: the domain's status, tier and score in every kept build that has a record of it, newest first. */
export function historyRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    await requireApiKey(event, services);
    const domain = domainParameter(queryOf(event));
    event.context.domain = domain;
    return sendAnswer(event, json<HistoryAnswer>('/v1/history', await services.history.history(domain)));
  });
}

/** `GET /v1/changes?since=ID[&cursor=]`: what changed from kept build ID to the live build, 1000 a page. */
export function changesRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    await requireApiKey(event, services);
    const query = queryOf(event);
    const since = queryParameter(query, 'since', true)!;
    return sendAnswer(event, json<ChangesPage>('/v1/changes', await services.history.changes(since, queryParameter(query, 'cursor'))));
  });
}
