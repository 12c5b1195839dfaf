import { KEY_SET_PATH } from '../core/keyset.ts';
import type { GatewayContext } from './context.ts';

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** OpenAPI 3.1 description of the gateway's HTTP API, served at `/openapi.json`. */
export function openApiDocument(ctx: Pick<GatewayContext, 'issuer'>, recordSchema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _drop, ...record } = recordSchema;
  return {
    openapi: '3.1.0',
    info: {
      title: 'merchant-verify',
      version: '1.0.0',
      description: 'Signed verification records for merchant domains. Records are Ed25519-signed over RFC 8785 canonical JSON; verify them with the public key set.',
    },
    servers: [{ url: `https://${ctx.issuer}` }],
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key from `mvr apikey create`.' } },
      schemas: {
        VerificationRecord: record,
        Problem: {
          type: 'object',
          required: ['type', 'title', 'status', 'detail', 'code'],
          properties: {
            type: { type: 'string', format: 'uri' },
            title: { type: 'string' },
            status: { type: 'integer' },
            detail: { type: 'string' },
            code: { type: 'string', enum: ['INVALID_DOMAIN', 'UNAUTHORIZED', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'RATE_LIMITED', 'STORE_UNAVAILABLE', 'UNAVAILABLE', 'INTERNAL'] },
          },
        },
        KeySet: {
          type: 'object',
          required: ['keys'],
          properties: {
            keys: {
              type: 'array',
              items: {
                type: 'object',
                required: ['kty', 'crv', 'x', 'kid'],
                properties: { kty: { const: 'OKP' }, crv: { const: 'Ed25519' }, x: { type: 'string' }, kid: { type: 'string' }, use: { const: 'sig' }, alg: { const: 'EdDSA' } },
              },
            },
          },
        },
      },
    },
    paths: {
      '/v1/verify': {
        get: {
          operationId: 'verifyMerchant',
          summary: 'The signed verification record of a domain',
          description: 'A valid domain that was never audited returns 200 with status "unverified" and score null, never 404.',
          security: [{ apiKey: [] }],
          parameters: [
            {
              name: 'domain',
              in: 'query',
              required: true,
              description: 'A hostname or URL; reduced to its registrable domain (eTLD+1), lowercase A-label form.',
              schema: { type: 'string', maxLength: 2048 },
            },
            { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
          ],
          responses: {
            '200': {
              description: 'The record, byte for byte as signed.',
              headers: {
                'Cache-Control': { schema: { type: 'string', const: 'public, max-age=60, s-maxage=300' } },
                ETag: { schema: { type: 'string' } },
                Vary: { schema: { type: 'string', const: 'Authorization' } },
              },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/VerificationRecord' } } },
            },
            '304': { description: 'Not modified (If-None-Match matched the ETag).' },
            '400': problem('INVALID_DOMAIN: the domain is not a valid hostname.'),
            '401': problem('UNAUTHORIZED: missing or invalid API key.'),
            '405': problem('METHOD_NOT_ALLOWED'),
            '429': problem('RATE_LIMITED'),
            '503': problem('STORE_UNAVAILABLE (records unavailable) or UNAVAILABLE (this record could not be assembled or verified).'),
          },
        },
      },
      [KEY_SET_PATH]: {
        get: {
          operationId: 'getKeySet',
          summary: 'The public JWK Set that verifies record signatures',
          security: [],
          responses: { '200': { description: 'JWK Set of Ed25519 public keys.', content: { 'application/jwk-set+json': { schema: { $ref: '#/components/schemas/KeySet' } } } } },
        },
      },
      '/schemas/verification/v1': {
        get: { operationId: 'getRecordSchema', summary: 'JSON Schema of the record', security: [], responses: { '200': { description: 'JSON Schema 2020-12.' } } },
      },
      '/healthz': {
        get: { operationId: 'health', summary: 'Liveness and store state', security: [], responses: { '200': { description: 'status ok or degraded.' } } },
      },
      '/mcp': {
        post: {
          operationId: 'mcp',
          summary: 'MCP Streamable HTTP endpoint (tool verify_merchant)',
          security: [{ apiKey: [] }],
          responses: { '200': { description: 'JSON-RPC response.' }, '401': problem('UNAUTHORIZED') },
        },
      },
    },
  };
}
