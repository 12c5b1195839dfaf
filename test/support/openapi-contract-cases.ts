/**
 * The requests the OpenAPI contract test makes, per documented operation: a success and every
 * documented error that can be brought about, each with the status it must get. `on` names the
 * gateway: `live` (two kept builds and a log), `empty` (no build: the store is unavailable),
 * `broken` (one stored record corrupt), `limited` (a quota of one request a minute).
 */
export type GatewayName = 'live' | 'empty' | 'broken' | 'limited';

export interface ContractCase {
  name: string;
  path: string;
  method?: string;
  /** false: send no key; 'mirror': a key made with the mirror scope (the gateway's own, ordinary key otherwise). */
  key?: false | 'mirror';
  body?: string;
  headers?: Record<string, string>;
  on?: GatewayName;
  status: number;
}

/** What the cases need from the live gateway: domains, kept build ids, a tile path. */
export interface CaseInputs {
  known: string;
  corrupt: string;
  older: string;
  tile: string;
}

const NEVER = 'never-audited-contract.example';
const json = { 'content-type': 'application/json' };
const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'contract', version: '1' } },
});
const mcpHeaders = { ...json, accept: 'application/json, text/event-stream' };

/** The lookups by domain: a success, a malformed domain, no key, a repeated parameter, the store unavailable. */
function lookup(path: string, good: string): ContractCase[] {
  return [
    { name: `${path} answers`, path: `${path}?domain=${good}`, status: 200 },
    { name: `${path} malformed domain`, path: `${path}?domain=co.uk`, status: 400 },
    { name: `${path} without a key`, path: `${path}?domain=${good}`, key: false, status: 401 },
    { name: `${path} store unavailable`, path: `${path}?domain=${good}`, on: 'empty', status: 503 },
  ];
}

/** An encapsulated request's header (RFC 9458 section 4.3) for key id `id` of the gateway's suite, as text. */
const OHTTP_HEADER = (id: number) => String.fromCharCode(id, 0x00, 0x20, 0x00, 0x01, 0x00, 0x01);
const ohttp = (body: string, type = 'message/ohttp-req') => ({
  path: '/.well-known/ohttp-gateway',
  method: 'POST',
  key: false as const,
  body,
  headers: { 'content-type': type },
});

export function contractCases(i: CaseInputs): ContractCase[] {
  const batch = (body: string, headers: Record<string, string> = json) => ({ path: '/v1/verify/batch', method: 'POST', body, headers });
  return [
    ...lookup('/v1/verify', i.known),
    { name: 'verify never audited', path: `/v1/verify?domain=${NEVER}`, status: 200 },
    { name: 'verify a kept build', path: `/v1/verify?domain=${i.known}&build=${i.older}`, status: 200 },
    { name: 'verify build given twice', path: `/v1/verify?domain=${i.known}&build=a&build=b`, status: 400 },
    { name: 'verify unknown build', path: `/v1/verify?domain=${i.known}&build=nope`, status: 404 },
    { name: 'verify corrupt record', path: `/v1/verify?domain=${i.corrupt}`, on: 'broken', status: 503 },
    { name: 'verify over the quota', path: `/v1/verify?domain=${i.known}`, on: 'limited', status: 429 },

    { name: 'batch answers', ...batch(JSON.stringify({ domains: [i.known, NEVER, 'co.uk'] })), status: 200 },
    { name: 'batch with a corrupt record', ...batch(JSON.stringify({ domains: [i.corrupt] })), on: 'broken', status: 200 },
    { name: 'batch not JSON', ...batch('{"domains": ['), status: 400 },
    { name: 'batch wrong shape', ...batch(JSON.stringify({ domains: [] })), status: 400 },
    { name: 'batch too large', ...batch(JSON.stringify({ domains: ['x'.repeat(70 * 1024)] })), status: 413 },
    { name: 'batch not JSON media type', ...batch('domains', { 'content-type': 'text/plain' }), status: 415 },
    { name: 'batch without a key', ...batch(JSON.stringify({ domains: [i.known] })), key: false, status: 401 },
    { name: 'batch store unavailable', ...batch(JSON.stringify({ domains: [i.known] })), on: 'empty', status: 503 },

    { name: 'builds', path: '/v1/builds', status: 200 },
    { name: 'builds without a key', path: '/v1/builds', key: false, status: 401 },
    { name: 'builds store unavailable', path: '/v1/builds', on: 'empty', status: 503 },

    ...lookup('/v1/history', i.known),
    { name: 'history corrupt record', path: `/v1/history?domain=${i.corrupt}`, on: 'broken', status: 503 },

    { name: 'changes', path: `/v1/changes?since=${i.older}`, status: 200 },
    { name: 'changes without since', path: '/v1/changes', status: 400 },
    { name: 'changes bad cursor', path: `/v1/changes?since=${i.older}&cursor=nope`, status: 400 },
    { name: 'changes unknown build', path: '/v1/changes?since=nope', status: 404 },
    { name: 'changes without a key', path: `/v1/changes?since=${i.older}`, key: false, status: 401 },
    { name: 'changes store unavailable', path: `/v1/changes?since=${i.older}`, on: 'empty', status: 503 },

    ...lookup('/v1/proof', i.known),
    { name: 'proof of a kept build', path: `/v1/proof?domain=${i.known}&build=${i.older}`, status: 200 },
    { name: 'proof build given twice', path: `/v1/proof?domain=${i.known}&build=a&build=b`, status: 400 },
    { name: 'proof never audited', path: `/v1/proof?domain=${NEVER}`, status: 404 },
    { name: 'proof unknown build', path: `/v1/proof?domain=${i.known}&build=nope`, status: 404 },
    { name: 'proof corrupt record', path: `/v1/proof?domain=${i.corrupt}`, on: 'broken', status: 503 },

    ...lookup('/v1/absence', NEVER),
    { name: 'absence in a kept build', path: `/v1/absence?domain=${NEVER}&build=${i.older}`, status: 200 },
    { name: 'absence build given twice', path: `/v1/absence?domain=${NEVER}&build=a&build=b`, status: 400 },
    { name: 'absence of an audited domain', path: `/v1/absence?domain=${i.known}`, status: 404 },
    ...lookup('/v1/bundle', i.known),
    { name: 'bundle never audited', path: `/v1/bundle?domain=${NEVER}`, status: 200 },
    { name: 'bundle of a kept build', path: `/v1/bundle?domain=${i.known}&build=${i.older}`, status: 400 },
    { name: 'bundle corrupt record', path: `/v1/bundle?domain=${i.corrupt}`, on: 'broken', status: 503 },
    { name: 'compact lookup statement', path: '/v1/lookup', status: 200 },
    { name: 'compact lookup statement without a key', path: '/v1/lookup', key: false, status: 401 },
    { name: 'compact lookup statement without a build', path: '/v1/lookup', on: 'empty', status: 503 },
    { name: 'compact lookup', path: '/v1/lookup/1/8', status: 200 },
    { name: 'compact lookup of other bits', path: '/v1/lookup/2/8', status: 400 },
    { name: 'compact lookup with bits past its own set', path: '/v1/lookup/1/9', status: 400 },
    { name: 'compact lookup without a key', path: '/v1/lookup/1/8', key: false, status: 401 },
    { name: 'compact lookup without a build', path: '/v1/lookup/1/8', on: 'empty', status: 503 },
    { name: 'absence unknown build', path: `/v1/absence?domain=${NEVER}&build=nope`, status: 404 },

    { name: 'mirror head', path: '/v1/mirror', key: 'mirror', status: 200 },
    { name: 'mirror head with an ordinary key', path: '/v1/mirror', status: 403 },
    { name: 'mirror head without a key', path: '/v1/mirror', key: false, status: 401 },
    { name: 'mirror head without a build', path: '/v1/mirror', key: 'mirror', on: 'empty', status: 503 },
    { name: 'mirror file', path: `/v1/mirror/builds/${i.older}/statement.json`, key: 'mirror', status: 200 },
    {
      name: 'mirror file range',
      path: `/v1/mirror/builds/${i.older}/domain-map`,
      key: 'mirror',
      headers: { range: 'bytes=0-31' },
      status: 206,
    },
    {
      name: 'mirror file range past its end',
      path: `/v1/mirror/builds/${i.older}/domain-map`,
      key: 'mirror',
      headers: { range: 'bytes=999999999-' },
      status: 416,
    },
    { name: 'mirror file not served', path: `/v1/mirror/builds/${i.older}/kept.json`, key: 'mirror', status: 404 },
    { name: 'mirror file of no kept build', path: '/v1/mirror/builds/nope/statement.json', key: 'mirror', status: 404 },
    { name: 'mirror file with an ordinary key', path: `/v1/mirror/builds/${i.older}/statement.json`, status: 403 },
    { name: 'mirror file without a key', path: `/v1/mirror/builds/${i.older}/statement.json`, key: false, status: 401 },
    { name: 'mirror file without a build', path: `/v1/mirror/builds/${i.older}/statement.json`, key: 'mirror', on: 'empty', status: 503 },

    { name: 'key set', path: '/.well-known/merchant-verify-keys.json', key: false, status: 200 },
    { name: 'key set without a build', path: '/.well-known/merchant-verify-keys.json', key: false, on: 'empty', status: 503 },
    { name: 'log verifier key', path: '/.well-known/merchant-verify-log.vkey', key: false, status: 200 },
    { name: 'log verifier key without a log', path: '/.well-known/merchant-verify-log.vkey', key: false, on: 'empty', status: 404 },
    { name: 'checkpoint', path: '/log/checkpoint', key: false, status: 200 },
    { name: 'checkpoint without a log', path: '/log/checkpoint', key: false, on: 'empty', status: 404 },
    { name: 'tile', path: `/log/tile/${i.tile}`, key: false, status: 200 },
    { name: 'tile not in the layout', path: '/log/tile/nope', key: false, status: 404 },

    { name: 'ohttp key configuration', path: '/.well-known/ohttp-gateway', key: false, status: 200 },
    { name: 'ohttp key configuration without a key', path: '/.well-known/ohttp-gateway', key: false, on: 'empty', status: 404 },
    { name: 'ohttp request that does not open', ...ohttp(`${OHTTP_HEADER(0)}${'a'.repeat(64)}`), status: 400 },
    { name: 'ohttp request for another key', ...ohttp(`${OHTTP_HEADER(9)}${'a'.repeat(64)}`), status: 422 },
    { name: 'ohttp request not message/ohttp-req', ...ohttp('x', 'application/json'), status: 415 },
    { name: 'ohttp request too large', ...ohttp('x'.repeat(70 * 1024)), status: 413 },

    { name: 'record schema', path: '/schemas/verification/v1', key: false, status: 200 },
    { name: 'bundle schema', path: '/schemas/bundle/v1', key: false, status: 200 },
    { name: 'openapi', path: '/openapi.json', key: false, status: 200 },
    { name: 'verify page', path: '/verify', key: false, status: 200 },
    { name: 'verify page script', path: '/verify/app.js', key: false, status: 200 },
    { name: 'health', path: '/healthz', key: false, status: 200 },
    { name: 'health degraded', path: '/healthz', key: false, on: 'empty', status: 200 },

    { name: 'mcp initialize', path: '/mcp', method: 'POST', body: initialize, headers: mcpHeaders, status: 200 },
    {
      name: 'mcp notification',
      path: '/mcp',
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      headers: { ...mcpHeaders, 'mcp-protocol-version': '2025-06-18' },
      status: 202,
    },
    { name: 'mcp not JSON', path: '/mcp', method: 'POST', body: '{', headers: mcpHeaders, status: 400 },
    { name: 'mcp too large', path: '/mcp', method: 'POST', body: 'x'.repeat(70 * 1024), headers: mcpHeaders, status: 413 },
    { name: 'mcp without a key', path: '/mcp', method: 'POST', body: initialize, headers: mcpHeaders, key: false, status: 401 },
  ];
}

/**
 * Documented statuses no case brings about, and why: checked against the document, so a newly
 * documented error needs a case or a reason here.
 */
const NOT_PRODUCED: Record<string, string> = {
  '500': 'INTERNAL: an unexpected failure, by definition not one a request can ask for',
  '429':
    'RATE_LIMITED: shown on /v1/verify; every key-gated route takes the same quota gate (gateway/auth.ts); the public log routes answer it past their own budget (test/gateway/public-budget.test.ts)',
  '/v1/builds 404': 'BUILD_NOT_FOUND: a records folder holding a copy of one build (test/gateway/history.test.ts)',
  '/v1/mirror 404': 'BUILD_NOT_FOUND: a gateway on an http(s) origin, which names no build (test/gateway/mirror.test.ts)',
  '/v1/history 404': 'BUILD_NOT_FOUND: a records folder holding a copy of one build (test/gateway/history.test.ts)',
  '/log/checkpoint 503': 'STORE_UNAVAILABLE: only from a bucket that cannot be read (a folder gateway reads its own public folder)',
  '/log/tile/{path} 503': 'STORE_UNAVAILABLE: only from a bucket that cannot be read (a folder gateway reads its own public folder)',
  '/.well-known/merchant-verify-log.vkey 503':
    'STORE_UNAVAILABLE: only from a bucket that cannot be read (a folder gateway reads its own public folder)',
  '/verify 404': 'NOT_FOUND: only when the page was not built ("npm run build" builds it before the tests)',
  '/verify/app.js 404': 'NOT_FOUND: only when the page was not built ("npm run build" builds it before the tests)',
};

/** Why a documented status of a path has no case, or undefined when it must have one. */
export const notProduced = (path: string, status: string): string | undefined => NOT_PRODUCED[`${path} ${status}`] ?? NOT_PRODUCED[status];
