import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { LOG_VKEY_PATH } from '../core/layout.ts';
import { OHTTP_GATEWAY_PATH } from '../core/ohttp.ts';

/**
 * How an answer may be cached, and by whom it may be read: the one place these headers are
 * written. Routes set them from {@link cacheHeaders}; the OpenAPI document describes them from
 * {@link cacheHeaderDocs}; the contract test checks real answers against both.
 */
export interface CachePolicy {
  cacheControl: string;
  /** Set on key-gated answers a shared cache may keep: one caller's answer is never another's. */
  vary?: 'Authorization';
  /** `Access-Control-Allow-Origin: *`: public files any page may read (the key set, the log). */
  anyOrigin?: true;
}

/** A record and what is proven about it: 60 s for clients, 300 s for shared caches (they change only with the build). */
const RECORD: CachePolicy = { cacheControl: 'public, max-age=60, s-maxage=300', vary: 'Authorization' };
/** Answers that move between builds, or with the state of the process, or name one caller's request. */
const NO_STORE: CachePolicy = { cacheControl: 'no-store' };
/** A mirror's: for its key alone, and kept by no cache (a checkpoint file gains cosignatures in place). */
const MIRROR: CachePolicy = { cacheControl: 'private, no-store' };
/** Public documents a CDN may serve to anyone. */
const PUBLIC: CachePolicy = { cacheControl: 'public, max-age=300', anyOrigin: true };

/** Per route, by its path as the OpenAPI document names it. */
export const CACHE_POLICY = {
  '/v1/verify': RECORD,
  '/v1/verify/batch': NO_STORE,
  '/v1/builds': NO_STORE,
  '/v1/history': NO_STORE,
  '/v1/changes': NO_STORE,
  '/v1/proof': RECORD,
  '/v1/absence': RECORD,
  '/v1/bundle': RECORD,
  // The statement a compact answer is checked against: its log proof gains cosignatures with a refresh.
  '/v1/lookup': RECORD,
  // A compact answer's bytes are one size by design: no proxy or CDN may compress or alter them.
  '/v1/lookup/{bits}/{hex}': { ...RECORD, cacheControl: `${RECORD.cacheControl}, no-transform` },
  '/v1/mirror': MIRROR,
  '/v1/mirror/builds/{build}/{file}': MIRROR,
  [KEY_SET_PATH]: PUBLIC,
  [LOG_VKEY_PATH]: PUBLIC,
  // The key configuration (GET); an encapsulated answer (POST) is ENCAPSULATED_ANSWER_HEADERS.
  [OHTTP_GATEWAY_PATH]: PUBLIC,
  // The checkpoint moves with each build; a tile never changes once written (its path names its width).
  '/log/checkpoint': { cacheControl: 'public, max-age=5', anyOrigin: true },
  '/log/tile/{path}': { cacheControl: 'public, max-age=31536000, immutable', anyOrigin: true },
  '/schemas/verification/v1': PUBLIC,
  '/schemas/bundle/v1': PUBLIC,
  '/openapi.json': PUBLIC,
  '/healthz': NO_STORE,
  // The page asks only its own origin: no CORS.
  '/verify': { cacheControl: 'public, max-age=300' },
  '/verify/app.js': { cacheControl: 'public, max-age=300' },
  '/mcp': NO_STORE,
} as const satisfies Record<string, CachePolicy>;

export type CachedRoute = keyof typeof CACHE_POLICY;

/** Every error (a problem document), on any route: never cached. */
export const PROBLEM_CACHE_POLICY: CachePolicy = NO_STORE;

function headersOf(policy: CachePolicy): Readonly<Record<string, string>> {
  return Object.freeze({
    'cache-control': policy.cacheControl,
    ...(policy.vary ? { vary: policy.vary } : {}),
    ...(policy.anyOrigin ? { 'access-control-allow-origin': '*' } : {}),
  });
}

// Made once: routes spread them into each answer's headers.
const HEADERS = Object.fromEntries(Object.entries(CACHE_POLICY).map(([route, policy]) => [route, headersOf(policy)])) as Record<
  CachedRoute,
  Readonly<Record<string, string>>
>;
/** An encapsulated answer's (`message/ohttp-res`): sealed for one request, so no cache keeps it (RFC 9458 section 7). */
export const ENCAPSULATED_ANSWER_HEADERS = headersOf(NO_STORE);
/** The headers of a problem document. */
export const PROBLEM_CACHE_HEADERS = headersOf(PROBLEM_CACHE_POLICY);

/** The answer headers (lower case, as node:http takes them) of a route's policy. */
export function cacheHeaders(route: CachedRoute): Readonly<Record<string, string>> {
  return HEADERS[route];
}

/** The OpenAPI header objects of a policy: each always sent, with its one value. */
export function cacheHeaderDocs(policy: CachePolicy): Record<string, unknown> {
  const header = (value: string, description: string) => ({ required: true, description, schema: { type: 'string', const: value } });
  return {
    'Cache-Control': header(policy.cacheControl, 'How long a client and a shared cache may keep the answer'),
    ...(policy.vary ? { Vary: header(policy.vary, 'A shared cache keeps one answer per API key') } : {}),
    ...(policy.anyOrigin ? { 'Access-Control-Allow-Origin': header('*', 'Any web page may read it') } : {}),
  };
}
