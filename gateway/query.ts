import type { H3Event } from 'h3';
import { InvalidDomainError, InvalidRequestError } from '../core/errors/errors.ts';
import { remembered } from '../core/memo.ts';
import { normalizeDomain } from '../core/rules/domain.ts';
import { requireApiKey } from './auth.ts';
import type { GatewayServices } from './context.ts';

/** The path of the request target as it was sent (before h3 decodes it), without its query. */
export function pathOf(event: H3Event): string {
  const target = event.node.req.originalUrl ?? '/';
  const q = target.indexOf('?');
  return q < 0 ? target : target.slice(0, q);
}

/** The query of the request target as sent, parsed once per request; read it with the functions below. */
export function queryOf(event: H3Event): URLSearchParams {
  const target = event.node.req.originalUrl ?? event.node.req.url ?? '/';
  const q = target.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : target.slice(q + 1));
}

/** Exactly one `domain` query parameter, normalized; errors name the query parameter. */
export function domainParameter(query: URLSearchParams): string {
  const found = query.getAll('domain');
  if (found.length === 0) throw new InvalidDomainError('query parameter "domain" is required');
  if (found.length > 1) throw new InvalidDomainError(`query parameter "domain" is given ${found.length} times; give it once`);
  try {
    return normalizeDomain(found[0]);
  } catch (error) {
    throw new InvalidDomainError(`query parameter "domain": ${(error as Error).message}`);
  }
}

/** An optional query parameter given at most once (INVALID_REQUEST otherwise; `required` makes it mandatory). */
export function queryParameter(query: URLSearchParams, name: string, required = false): string | undefined {
  const found = query.getAll(name);
  if (found.length > 1) throw new InvalidRequestError(`query parameter "${name}" is given ${found.length} times; give it once`);
  if (required && (found.length === 0 || found[0] === '')) throw new InvalidRequestError(`query parameter "${name}" is required`);
  return found[0];
}

/** What a lookup of one domain asks: the normalized domain, and the build when one is named. */
export interface DomainLookup {
  readonly domain: string;
  readonly build: string | undefined;
}

/**
 * How every lookup of one domain starts (`/v1/verify`, `/v1/absence`, `/v1/proof`): the key first
 * (401 before 400), then exactly one `domain`, normalized and noted for the access log, and an
 * optional `build`. In the same turn unless the key check has to wait (see `auth.ts`).
 */
export function domainLookup(event: H3Event, services: GatewayServices): DomainLookup | Promise<DomainLookup> {
  const keyId = requireApiKey(event, services);
  if (typeof keyId !== 'string') return keyId.then(() => lookupOf(event));
  return lookupOf(event);
}

function lookupOf(event: H3Event): DomainLookup {
  const target = event.node.req.originalUrl ?? event.node.req.url ?? '/';
  const q = target.indexOf('?');
  const search = q < 0 ? '' : target.slice(q + 1);
  const lookup = lookupOfQuery(search);
  event.context.domain = lookup.domain;
  return lookup;
}

/** A lookup's query (as sent, after the `?`): exactly one `domain`, normalized, and at most one `build`. */
function parseLookup(search: string): DomainLookup {
  const query = new URLSearchParams(search);
  return Object.freeze({ domain: domainParameter(query), build: queryParameter(query, 'build') });
}

/**
 * Queries parsed lately, and their lookup: the same shops are asked about again and again, and
 * parsing the query and normalizing its domain was a visible part of a hot record's CPU (about a
 * twentieth of it, `perf`, decision 0097).
 */
const lookupOfQuery = remembered(parseLookup, { entries: 10_000, longestInput: 512 });
