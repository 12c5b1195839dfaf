import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { ifNoneMatch, notModified, ok, problems, routeHeaders } from './openapi-parts.ts';

/** What anyone may fetch without a key: the key set, the record's schema, this document, the verify page, health. */
export function publicPaths(schemaUrl: string): Record<string, unknown> {
  const open = { tags: ['public'], security: [] };
  return {
    [KEY_SET_PATH]: {
      get: {
        operationId: 'getKeySet',
        ...open,
        summary: 'The public JWK Set that verifies record signatures',
        parameters: [ifNoneMatch],
        responses: {
          ...ok(KEY_SET_PATH, 'JWK Set of Ed25519 public keys.', 'KeySet', { type: 'application/jwk-set+json', conditional: true }),
          ...notModified(KEY_SET_PATH),
          ...problems(['METHOD_NOT_ALLOWED', 'STORE_UNAVAILABLE', 'INTERNAL']),
        },
      },
    },
    '/schemas/verification/v1': {
      get: {
        operationId: 'getRecordSchema',
        ...open,
        summary: 'JSON Schema (2020-12) of the record',
        parameters: [ifNoneMatch],
        responses: {
          '200': {
            description: `The schema, with $id ${schemaUrl}.`,
            headers: routeHeaders('/schemas/verification/v1', true),
            content: {
              'application/schema+json': {
                schema: {
                  type: 'object',
                  required: ['$id', '$schema'],
                  properties: { $id: { const: schemaUrl }, $schema: { const: 'https://json-schema.org/draft/2020-12/schema' } },
                },
              },
            },
          },
          ...notModified('/schemas/verification/v1'),
          ...problems(['METHOD_NOT_ALLOWED']),
        },
      },
    },
    '/schemas/bundle/v1': {
      get: {
        operationId: 'getBundleSchema',
        ...open,
        summary: 'JSON Schema (2020-12) of the offline bundle (GET /v1/bundle)',
        parameters: [ifNoneMatch],
        responses: {
          '200': {
            description: 'The schema, with $id https://{issuer}/schemas/bundle/v1.',
            headers: routeHeaders('/schemas/bundle/v1', true),
            content: {
              'application/schema+json': {
                schema: {
                  type: 'object',
                  required: ['$id', '$schema'],
                  properties: { $id: { type: 'string' }, $schema: { const: 'https://json-schema.org/draft/2020-12/schema' } },
                },
              },
            },
          },
          ...notModified('/schemas/bundle/v1'),
          ...problems(['METHOD_NOT_ALLOWED']),
        },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'getOpenApi',
        ...open,
        summary: 'This document',
        parameters: [ifNoneMatch],
        responses: {
          '200': {
            description: 'OpenAPI 3.1.',
            headers: routeHeaders('/openapi.json', true),
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['openapi', 'paths'],
                  properties: { openapi: { const: '3.1.0' }, paths: { type: 'object' } },
                },
              },
            },
          },
          ...notModified('/openapi.json'),
          ...problems(['METHOD_NOT_ALLOWED']),
        },
      },
    },
    '/verify': pageFile(
      '/verify',
      'verifyPage',
      'A page that verifies a pasted record, or looks a domain up with an API key, in the browser',
      'text/html; charset=utf-8',
    ),
    '/verify/app.js': pageFile(
      '/verify/app.js',
      'verifyPageScript',
      "The verify page's script, with the verifier inside",
      'text/javascript; charset=utf-8',
    ),
    '/healthz': {
      get: {
        operationId: 'health',
        ...open,
        summary: 'Liveness and store state',
        description: 'Always 200 while the process serves; `status` says whether records and key set are loaded.',
        responses: { ...ok('/healthz', 'status ok or degraded.', 'Health'), ...problems(['METHOD_NOT_ALLOWED']) },
      },
    },
  };
}

/** A file of the verify page, as `npm run build` made it (404 when it was not built). */
function pageFile(route: '/verify' | '/verify/app.js', operationId: string, summary: string, type: string): Record<string, unknown> {
  return {
    get: {
      operationId,
      tags: ['public'],
      security: [],
      summary,
      parameters: [ifNoneMatch],
      responses: {
        '200': { description: 'The file.', headers: routeHeaders(route, true), content: { [type]: { schema: { type: 'string' } } } },
        ...notModified(route),
        ...problems(['NOT_FOUND', 'METHOD_NOT_ALLOWED']),
      },
    },
  };
}
