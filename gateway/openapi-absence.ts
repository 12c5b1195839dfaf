import { etagHeader, GATED, ifNoneMatch, json, notModified, problems } from './openapi-parts.ts';

/** `GET /v1/absence`. */
export function absencePaths(): Record<string, unknown> {
  return {
    '/v1/absence': {
      get: {
        operationId: 'getAbsenceProof',
        tags: ['records'],
        summary: 'The proof that a domain has no record in the live build (never audited), or in a kept build',
        description: 'The build\'s signed statement and the two leaves of its domain map around the domain\'s hash. One quota unit. A domain with a record is 404 HAS_RECORD.',
        parameters: [
          { name: 'domain', in: 'query', required: true, schema: { $ref: '#/components/schemas/DomainParameter' } },
          { name: 'build', in: 'query', required: false, description: 'A kept build\'s id (GET /v1/builds); the live build when absent.', schema: { type: 'string' } },
          ifNoneMatch,
        ],
        responses: {
          '200': {
            description: 'The proof.',
            headers: { ...etagHeader, 'Cache-Control': { schema: { type: 'string', const: 'public, max-age=60, s-maxage=300' } }, Vary: { schema: { type: 'string', const: 'Authorization' } } },
            content: json('AbsenceProof'),
          },
          ...notModified,
          ...problems(['INVALID_DOMAIN', 'INVALID_REQUEST', ...GATED, 'HAS_RECORD', 'BUILD_NOT_FOUND', 'STORE_UNAVAILABLE']),
        },
      },
    },
  };
}
