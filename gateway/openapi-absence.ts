import { domainParameter, GATED, ifNoneMatch, notModified, ok, problems } from './openapi-parts.ts';

/** `GET /v1/absence`. */
export function absencePaths(): Record<string, unknown> {
  return {
    '/v1/absence': {
      get: {
        operationId: 'getAbsenceProof',
        tags: ['records'],
        summary: 'The proof that a domain has no record in the live build (never audited), or in a kept build',
        description:
          "The build's signed statement and the two leaves of its domain map around the domain's hash (in a build of schema .../build/v2 each leaf is that domain's 82-byte entry, which commits to its record's bytes and verdict; in a v1 build, the domain hash), and (statement_proof) the statement's entry in the transparency log against the build's checkpoint. One quota unit. A domain with a record is 404 HAS_RECORD.",
        parameters: [
          domainParameter,
          {
            name: 'build',
            in: 'query',
            required: false,
            description: "A kept build's id (GET /v1/builds); the live build when absent.",
            schema: { type: 'string' },
          },
          ifNoneMatch,
        ],
        responses: {
          ...ok('/v1/absence', 'The proof.', 'AbsenceProof', { conditional: true }),
          ...notModified('/v1/absence'),
          ...problems(['INVALID_DOMAIN', 'INVALID_REQUEST', ...GATED, 'HAS_RECORD', 'BUILD_NOT_FOUND', 'STORE_UNAVAILABLE', 'UNAVAILABLE']),
        },
      },
    },
  };
}
