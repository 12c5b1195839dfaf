import { z } from 'zod';
import { HTTP_ERROR_CODES } from '@merchant-verify/verifier/errors';
import { KEY_SET_PATH } from '@merchant-verify/verifier/keyset';
import { recordSchema } from '../core/record.ts';
import { RECORD_CACHE_CONTROL } from './routes/verify.ts';
import { etagHeader, GATED, ifNoneMatch, json, notModified, problems, publicHeaders } from './openapi-parts.ts';
import { batchPaths } from './openapi-batch.ts';
import { historyPaths } from './openapi-history.ts';
import { logPaths } from './openapi-log.ts';
import { absencePaths } from './openapi-absence.ts';
import { absenceProofSchema, buildStatementSchema } from '../core/absence-schema.ts';
import { batchRequestSchema } from '../service/batch.ts';

/** An RFC 9457 problem document, as every error of the HTTP API is answered. */
export const problemSchema = z
  .object({
    type: z.url().describe('`https://{issuer}/problems/<code in kebab case>`'),
    title: z.string().describe("The code's title"),
    status: z.int().describe('The HTTP status'),
    detail: z.string().describe('What is wrong, naming the query parameter, header or member'),
    code: z.enum(HTTP_ERROR_CODES).describe('Stable, machine-readable code'),
  })
  .meta({ title: 'Problem' });

/** The public JWK Set (RFC 7517) of Ed25519 keys that verify record signatures. */
export const keySetSchema = z
  .object({
    keys: z.array(
      z.object({
        kty: z.literal('OKP'),
        crv: z.literal('Ed25519'),
        x: z.string().regex(/^[A-Za-z0-9_-]{43}$/).describe('The public key, 32 bytes in base64url'),
        kid: z.string().min(1).describe('RFC 7638 thumbprint; what a record names in key_id'),
        use: z.literal('sig'),
        alg: z.literal('EdDSA'),
      }),
    ),
  })
  .meta({ title: 'Key set' });

/** `GET /healthz`. */
export const healthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']),
    records: z.object({ ok: z.boolean(), build: z.string().nullable(), error: z.string().nullable(), failures: z.int().min(0).describe('Stored records refused since start: missing though the map lists them, unreadable, too large, not regular files, corrupt or not verifying') }),
    key_set: z.object({ ok: z.boolean(), keys: z.int().min(0) }),
    cache: z.object({ entries: z.int().min(0), bytes: z.int().min(0), limit: z.int().min(0) }),
    api_keys: z.int().min(0).describe('Live (not revoked) API keys'),
  })
  .meta({ title: 'Health' });

/** The `domain` query parameter of `GET /v1/verify`. */
export const domainParameterSchema = z.string().max(2048).describe('A hostname or URL; reduced to its registrable domain (eTLD+1), lowercase A-label form.');

/** The record's JSON Schema (2020-12), with its `$id`: what `/schemas/verification/v1` serves. */
export function recordJsonSchema(schemaUrl: string): Record<string, unknown> {
  return { $id: schemaUrl, ...z.toJSONSchema(recordSchema, { target: 'draft-2020-12' }) };
}

/** The components, generated from the zod schemas above and the record's; references between them by `$ref`. */
function components(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  registry.add(recordSchema, { id: 'VerificationRecord' });
  registry.add(problemSchema, { id: 'Problem' });
  registry.add(keySetSchema, { id: 'KeySet' });
  registry.add(healthSchema, { id: 'Health' });
  registry.add(domainParameterSchema, { id: 'DomainParameter' });
  registry.add(batchRequestSchema, { id: 'BatchRequest' });
  registry.add(buildStatementSchema, { id: 'BuildStatement' });
  registry.add(absenceProofSchema, { id: 'AbsenceProof' });
  const { schemas } = z.toJSONSchema(registry, { uri: (id) => `#/components/schemas/${id}` });
  // Inside an OpenAPI document a component is named by its key, not by `$id` or `$schema`.
  return Object.fromEntries(Object.entries(schemas).map(([id, { $id: _id, $schema: _schema, ...schema }]) => [id, schema]));
}

/** OpenAPI 3.1 description of the gateway's HTTP API, served at `/openapi.json`. */
export function openApiDocument(options: { issuer: string; schemaUrl: string }): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'merchant-verify',
      version: '1.0.0',
      description: 'Signed verification records for merchant domains. Records are Ed25519-signed over RFC 8785 canonical JSON; verify them with the public key set. Every answer carries `X-Content-Type-Options: nosniff`; a request with more than one `Host` or `Authorization` header is refused with 400 INVALID_REQUEST before any route sees it.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: `https://${options.issuer}` }],
    security: [{ apiKey: [] }],
    tags: [
      { name: 'records', description: 'Key-gated verification records' },
      { name: 'public', description: 'Open to anyone; a CDN may serve these' },
    ],
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key from `mvr apikey create`.' } },
      schemas: components(),
    },
    paths: {
      '/v1/verify': {
        get: {
          operationId: 'verifyMerchant',
          tags: ['records'],
          summary: 'The signed verification record of a domain',
          description: 'A valid domain that was never audited returns 200 with status "unverified" and score null, never 404. HEAD is answered too.',
          parameters: [
            { name: 'domain', in: 'query', required: true, description: domainParameterSchema.description, schema: { $ref: '#/components/schemas/DomainParameter' } },
            { name: 'build', in: 'query', required: false, description: 'A kept build (GET /v1/builds): the record as that build signed it. The live build by default.', schema: { type: 'string' } },
            ifNoneMatch,
          ],
          responses: {
            '200': {
              description: 'The record, byte for byte as signed.',
              headers: {
                ...etagHeader,
                'Cache-Control': { schema: { type: 'string', const: RECORD_CACHE_CONTROL } },
                Vary: { schema: { type: 'string', const: 'Authorization' } },
              },
              content: json('VerificationRecord'),
            },
            ...notModified,
            ...problems(['INVALID_DOMAIN', 'INVALID_REQUEST', ...GATED, 'BUILD_NOT_FOUND', 'STORE_UNAVAILABLE', 'UNAVAILABLE']),
          },
        },
      },
      ...batchPaths(),
      ...historyPaths(),
      ...logPaths(),
      ...absencePaths(),
      [KEY_SET_PATH]: {
        get: {
          operationId: 'getKeySet',
          tags: ['public'],
          summary: 'The public JWK Set that verifies record signatures',
          security: [],
          parameters: [ifNoneMatch],
          responses: { '200': { description: 'JWK Set of Ed25519 public keys.', headers: publicHeaders, content: json('KeySet', 'application/jwk-set+json') }, ...notModified, ...problems(['METHOD_NOT_ALLOWED', 'STORE_UNAVAILABLE', 'INTERNAL']) },
        },
      },
      '/schemas/verification/v1': {
        get: {
          operationId: 'getRecordSchema',
          tags: ['public'],
          summary: 'JSON Schema (2020-12) of the record',
          security: [],
          parameters: [ifNoneMatch],
          responses: { '200': { description: `The schema, with $id ${options.schemaUrl}.`, headers: publicHeaders, content: { 'application/schema+json': { schema: { type: 'object' } } } }, ...notModified, ...problems(['METHOD_NOT_ALLOWED']) },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'getOpenApi',
          tags: ['public'],
          summary: 'This document',
          security: [],
          parameters: [ifNoneMatch],
          responses: { '200': { description: 'OpenAPI 3.1.', headers: publicHeaders, content: { 'application/json': { schema: { type: 'object' } } } }, ...notModified, ...problems(['METHOD_NOT_ALLOWED']) },
        },
      },
      '/verify': {
        get: {
          operationId: 'verifyPage',
          tags: ['public'],
          summary: 'A page that verifies a pasted record, or looks a domain up with an API key, in the browser',
          security: [],
          responses: { '200': { description: 'The page (its script is /verify/app.js).', content: { 'text/html': { schema: { type: 'string' } } } }, ...problems(['NOT_FOUND', 'METHOD_NOT_ALLOWED']) },
        },
      },
      '/healthz': {
        get: {
          operationId: 'health',
          tags: ['public'],
          summary: 'Liveness and store state',
          description: 'Always 200 while the process serves; `status` says whether records and key set are loaded.',
          security: [],
          responses: { '200': { description: 'status ok or degraded.', content: json('Health') }, ...problems(['METHOD_NOT_ALLOWED']) },
        },
      },
      '/mcp': {
        post: {
          operationId: 'mcp',
          tags: ['records'],
          summary: 'MCP Streamable HTTP endpoint (tools verify_merchant, verify_merchants, merchant_history)',
          description: 'Stateless JSON-RPC; the tool answers with the same record bytes as GET /v1/verify.',
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', description: 'A JSON-RPC 2.0 message, at most 64 KiB' } } } },
          responses: {
            '200': { description: 'JSON-RPC response.', content: { 'application/json': { schema: { type: 'object' } } } },
            '202': { description: 'A notification was accepted.' },
            '400': { description: 'The body is not JSON (JSON-RPC parse error).', content: { 'application/json': { schema: { type: 'object' } } } },
            ...problems(['PAYLOAD_TOO_LARGE', ...GATED]),
          },
        },
      },
    },
  };
}
