import { GATED, problems } from './openapi-parts.ts';

/** `POST /v1/verify/batch`. */
export function batchPaths(): Record<string, unknown> {
  const result = {
    oneOf: [
      { type: 'object', required: ['domain', 'record'], properties: { domain: { type: 'string', description: 'The domain as sent' }, record: { $ref: '#/components/schemas/VerificationRecord' } } },
      { type: 'object', required: ['domain', 'problem'], properties: { domain: { type: 'string', description: 'The domain as sent' }, problem: { $ref: '#/components/schemas/Problem' } } },
    ],
  };
  return {
    '/v1/verify/batch': {
      post: {
        operationId: 'verifyMerchants',
        tags: ['records'],
        summary: 'The signed records of 1 to 100 domains at once',
        description:
          'One result per domain sent, in order: the record, exactly as GET /v1/verify answers it (so each verifies on its own), or a problem document (INVALID_DOMAIN, UNAVAILABLE). Each domain counts once against the key\'s quota; a refused batch (400, 413, 415) counts once. The body is at most 64 KiB (413 PAYLOAD_TOO_LARGE).',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/BatchRequest' } } } },
        responses: {
          '200': {
            description: 'The results, in the order of the domains sent.',
            headers: { 'Cache-Control': { schema: { type: 'string', const: 'no-store' } } },
            content: { 'application/json': { schema: { type: 'object', required: ['results'], properties: { results: { type: 'array', items: result } } } } },
          },
          ...problems(['INVALID_REQUEST', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', ...GATED, 'STORE_UNAVAILABLE']),
        },
      },
    },
  };
}
