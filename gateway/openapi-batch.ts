import { content, GATED, ok, problems } from './openapi-parts.ts';

/** `POST /v1/verify/batch`. */
export function batchPaths(): Record<string, unknown> {
  return {
    '/v1/verify/batch': {
      post: {
        operationId: 'verifyMerchants',
        tags: ['records'],
        summary: 'The signed records of 1 to 100 domains at once',
        description:
          "One result per domain sent, in order: the record, exactly as GET /v1/verify answers it (so each verifies on its own), or a problem document (INVALID_DOMAIN, UNAVAILABLE). Each domain counts once against the key's quota; a refused batch (400, 413, 415) counts once. The body is at most 64 KiB (413 PAYLOAD_TOO_LARGE).",
        requestBody: { required: true, content: content('BatchRequest') },
        responses: {
          ...ok('/v1/verify/batch', 'The results, in the order of the domains sent.', 'BatchAnswer'),
          ...problems(['INVALID_REQUEST', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', ...GATED, 'STORE_UNAVAILABLE']),
        },
      },
    },
  };
}
