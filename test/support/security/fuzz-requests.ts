/**
 * The requests the HTTP front-door fuzz (fuzz.ts) sends, as fast-check arbitraries: random method,
 * target, query, Authorization and extra headers, sometimes a body, with some aimed at the
 * key-gated routes so the key check, the domain and MCP are reached often.
 */

import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import fc from 'fast-check';

/** The API keys the Authorization values use, set once the gateway is up (read when a request is generated). */
export const keys = { valid: '', revoked: '' };

const TOKEN_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+.^_`|~-";
const token = (max: number) => fc.string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength: 1, maxLength: max });
const printable = (max: number) =>
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: max });

export const method = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH') },
  { weight: 2, arbitrary: fc.constantFrom(...http.METHODS) },
  { weight: 2, arbitrary: token(10) },
);

const KNOWN_PATHS = ['/v1/verify', KEY_SET_PATH, '/schemas/verification/v1', '/openapi.json', '/healthz', '/mcp'];
const SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '%2e',
  '',
  'v1',
  'verify',
  'V1',
  'mcp',
  'healthz',
  '.well-known',
  'merchant-verify-keys.json',
  'schemas',
  '%2f',
  '%2F',
  '%00',
  '%5c',
  '~',
  '*',
  '%',
  'openapi.json',
  'index.html',
  '..%2f',
  ';x=1',
];
const PCHAR = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@";
const pctEscape = fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, '0')}`);
const segment = fc.oneof(
  fc.constantFrom(...SEGMENTS),
  fc.array(fc.oneof(fc.constantFrom(...PCHAR), pctEscape), { maxLength: 8 }).map((a) => a.join('')),
);
export const path = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KNOWN_PATHS) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...KNOWN_PATHS), fc.constantFrom('/', '/..', '/%2e%2e', '//', '/.', '%2f', '.', '/x'))
      .map(([p, s]) => p + s),
  },
  { weight: 1, arbitrary: fc.constantFrom(...KNOWN_PATHS).map((p) => `/${p}`) },
  { weight: 3, arbitrary: fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => `/${s.join('/')}`) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom('..', '%2e%2e', '.'), fc.constantFrom(...KNOWN_PATHS)).map(([up, p]) => `/x/${up}${p}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('*', '/', '//', '///v1/verify') },
);

const DOMAINS = [
  'acme-outdoor.example',
  'ACME-OUTDOOR.EXAMPLE',
  'never-audited.example',
  'co.uk',
  '127.0.0.1',
  'localhost',
  '%2561cme-outdoor.example',
  'b%C3%BCcher-haus.example',
  'https%3A%2F%2Fwww.acme-outdoor.example%2Fx',
  '..%2F..%2Fetc%2Fpasswd',
  '',
];
const queryValue = fc.oneof(
  fc.constantFrom(...DOMAINS),
  fc.array(fc.oneof(fc.constantFrom(...PCHAR.replace(/[&=+]/g, '')), pctEscape), { maxLength: 12 }).map((a) => a.join('')),
);
export const query: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.constantFrom(...DOMAINS).map((d) => `domain=${d}`) },
  {
    weight: 3,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.oneof(
            { weight: 3, arbitrary: fc.constant('domain') },
            { weight: 1, arbitrary: fc.constantFrom('DOMAIN', 'x', 'key', 'api_key', '%64omain') },
          ),
          fc.option(queryValue, { nil: undefined }),
        ),
        { maxLength: 3 },
      )
      .map((pairs) => pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join('&')),
  },
);

export type Auth = { kind: 'none' } | { kind: 'valid' | 'other'; value: string };
const forged = () => `mvr_${randomBytes(5).toString('hex')}_${randomBytes(32).toString('base64url')}`;
export const authorization: fc.Arbitrary<Auth> = fc.oneof(
  fc.constant<Auth>({ kind: 'none' }),
  {
    weight: 6,
    arbitrary: fc.constantFrom('Bearer', 'bearer', 'BEARER', 'BeArEr').map((s): Auth => ({ kind: 'valid', value: `${s} ${keys.valid}` })),
  },
  fc.constant(0).map((): Auth => ({ kind: 'valid', value: `Bearer \t ${keys.valid} \t` })),
  fc.constant(0).map((): Auth => ({ kind: 'other', value: `Bearer ${keys.revoked}` })),
  fc.constant(0).map((): Auth => ({ kind: 'other', value: `Bearer ${forged()}` })),
  fc.constant(0).map((): Auth => ({ kind: 'other', value: `Basic ${Buffer.from(`user:${keys.valid}`).toString('base64')}` })),
  fc.constant(0).map((): Auth => ({ kind: 'other', value: `Bearer ${keys.valid} extra` })),
  fc.constant(0).map((): Auth => ({ kind: 'other', value: `Bearer ${keys.valid.slice(0, -1)}` })),
  fc.constantFrom('Bearer', 'Bearer ', 'Token abc', 'Digest x', 'mvr_', '""').map((value): Auth => ({ kind: 'other', value })),
  printable(40).map((value): Auth => ({ kind: 'other', value: value || 'x' })),
);

const HEADER_NAMES = [
  'Accept',
  'Accept-Encoding',
  'Accept-Language',
  'If-None-Match',
  'If-Modified-Since',
  'Range',
  'Origin',
  'Referer',
  'Cookie',
  'User-Agent',
  'X-Forwarded-For',
  'X-Forwarded-Host',
  'X-Forwarded-Proto',
  'Forwarded',
  'X-Real-IP',
  'Content-Type',
  'Cache-Control',
  'Pragma',
  'Mcp-Session-Id',
  'Mcp-Protocol-Version',
  'Last-Event-ID',
  'X-HTTP-Method-Override',
  'Access-Control-Request-Method',
  'Sec-Fetch-Mode',
];
const HEADER_VALUES = [
  '*',
  '*/*',
  'application/json',
  'application/json, text/event-stream',
  'text/event-stream',
  '"x"',
  'W/"x"',
  'gzip, br',
  'bytes=0-10',
  'null',
  '127.0.0.1',
  'DELETE',
  '2025-06-18',
  'https://evil.example',
];
// Framing and connection headers (Host, Content-Length, Transfer-Encoding, Connection, Upgrade,
// Expect) are the business of smuggling.test.ts; here they stay well-formed.
const FRAMING = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'expect',
  'authorization',
  'te',
  'keep-alive',
  'proxy-connection',
  'http2-settings',
]);
export const extraHeaders = fc.array(
  fc.tuple(
    fc.oneof(
      fc.constantFrom(...HEADER_NAMES),
      token(16).filter((n) => !FRAMING.has(n.toLowerCase())),
    ),
    fc.oneof(fc.constantFrom(...HEADER_VALUES), printable(30)),
  ),
  { maxLength: 4 },
);

const RPC = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
export const body = fc.option(
  fc.constantFrom(
    '',
    '{}',
    'null',
    '[]',
    'not json',
    RPC('tools/list', {}),
    RPC('tools/call', { name: 'verify_merchant', arguments: { domain: 'acme-outdoor.example' } }),
    RPC('tools/call', { name: 'verify_merchant', arguments: { domain: 'co.uk' } }),
    RPC('tools/call', { name: 'verify_merchant', arguments: { domain: 42 } }),
    RPC('tools/call', { name: 'nope', arguments: {} }),
    RPC('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } }),
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  ),
  { nil: undefined },
);

export const request = fc.oneof(
  // Anything at all.
  fc.record({ method, path, query, authorization, headers: extraHeaders, body, absoluteForm: fc.boolean() }),
  // Aimed at the key-gated routes, so the key check, the domain and MCP are reached often.
  fc
    .tuple(
      fc.constantFrom(['GET', '/v1/verify'], ['GET', '/v1/verify'], ['HEAD', '/v1/verify'], ['POST', '/mcp']),
      fc.record({ query, authorization, headers: extraHeaders, body, absoluteForm: fc.boolean() }),
    )
    .map(([[m, p], rest]) => ({ method: m, path: p, ...rest })),
);
export type Req = typeof request extends fc.Arbitrary<infer T> ? T : never;
