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

/** `GET /v1/bundle`. */
export function bundlePaths(): Record<string, unknown> {
  return {
    '/v1/bundle': {
      get: {
        operationId: 'getBundle',
        tags: ['records'],
        summary: "A domain's answer with everything that proves it, in one document to keep and check offline",
        description:
          "The live build's record (or never-audited answer with its absence proof), the record's place in the build's domain map, the signed build statement and its log proof with the checkpoint's cosignatures. One quota unit; of the live build only (a `build` parameter is 400 INVALID_REQUEST). Verify with verifyBundle, or mvr verify DOMAIN --bundle FILE; the schema is also served at /schemas/bundle/v1.",
        parameters: [domainParameter, ifNoneMatch],
        responses: {
          ...ok('/v1/bundle', 'The bundle.', 'Bundle', { conditional: true }),
          ...notModified('/v1/bundle'),
          ...problems(['INVALID_DOMAIN', 'INVALID_REQUEST', ...GATED, 'STORE_UNAVAILABLE', 'UNAVAILABLE']),
        },
      },
    },
  };
}
