import { ERROR_REGISTRY, type ErrorCode } from '../core/errors/errors.ts';
import { CACHE_POLICY, type CachedRoute, cacheHeaderDocs, PROBLEM_CACHE_POLICY } from './cache-policy.ts';

// Pieces of the OpenAPI document that its parts share. Schemas are named by reference to the
// components generated from the zod schemas (gateway/openapi.ts); headers come from the cache
// policy table, as the routes take them.

/** A reference to a component schema. */
export const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/** Content of one media type whose body is a component. */
export const content = (id: string, type = 'application/json') => ({ [type]: { schema: ref(id) } });

export const etagHeader = { ETag: { required: true, description: 'Strong entity tag of the exact bytes', schema: { type: 'string' } } };
export const ifNoneMatch = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'An ETag from an earlier answer; 304 when it still matches.',
  schema: { type: 'string' },
};

/** The headers a route's answers carry, by its cache policy; with its entity tag where it is answered conditionally. */
export function routeHeaders(route: CachedRoute, conditional = false): Record<string, unknown> {
  return { ...(conditional ? etagHeader : {}), ...cacheHeaderDocs(CACHE_POLICY[route]) };
}

/** A 200 with a body of component `id` (null: bytes no schema describes), and the route's headers. */
export function ok(
  route: CachedRoute,
  description: string,
  id: string | null,
  options: { type?: string; conditional?: boolean } = {},
): Record<string, unknown> {
  const type = options.type ?? 'application/json';
  return {
    '200': { description, headers: routeHeaders(route, options.conditional), content: id === null ? { [type]: {} } : content(id, type) },
  };
}

/** The 304 of a conditional route: its entity tag and cache headers again, no body. */
export function notModified(route: CachedRoute): Record<string, unknown> {
  return { '304': { description: 'Not modified: If-None-Match matched the ETag.', headers: routeHeaders(route, true) } };
}

const header = (description: string, pattern: string) => ({ required: true, description, schema: { type: 'string', pattern } });
/** What some statuses carry beside the problem document (gateway/problem.ts sets them). */
const STATUS_HEADERS: Record<number, Record<string, unknown>> = {
  401: { 'WWW-Authenticate': header('The Bearer challenge, with error="invalid_token" when a key was sent', '^Bearer realm="[^"]+"') },
  405: { Allow: header('The methods the path takes', '^[A-Z]+(, [A-Z]+)*$') },
  416: { 'Content-Range': header('The length of the whole file', '^bytes \\*/\\d+$') },
  429: { 'Retry-After': header('Seconds until the quota takes a request again', '^\\d+$') },
};

/**
 * The error responses of an operation, by status: each a problem document whose `code` is one
 * the operation documents (the description names each code with its title from the registry).
 */
export function problems(codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_REGISTRY[code].status!;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: list.map((code) => `${code}: ${ERROR_REGISTRY[code].title}`).join('; '),
        headers: { ...cacheHeaderDocs(PROBLEM_CACHE_POLICY), ...STATUS_HEADERS[status] },
        content: { 'application/problem+json': { schema: { allOf: [ref('Problem')], properties: { code: { enum: list } } } } },
      },
    ]),
  );
}

/** Codes any key-gated operation may answer with. */
export const GATED: ErrorCode[] = ['UNAUTHORIZED', 'METHOD_NOT_ALLOWED', 'RATE_LIMITED', 'INTERNAL'];

/** The `domain` query parameter of the lookups. */
export const domainParameter = { name: 'domain', in: 'query', required: true, schema: ref('DomainParameter') };
