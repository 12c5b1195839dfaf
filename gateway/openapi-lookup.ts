import { GATED, ifNoneMatch, notModified, ok, problems } from './openapi-parts.ts';

/** `GET /v1/lookup/{prefix}`. */
export function lookupPaths(): Record<string, unknown> {
  return {
    '/v1/lookup/{prefix}': {
      get: {
        operationId: 'getPrefixAnswer',
        tags: ['records'],
        summary:
          'A private lookup: every record of the live build whose domain hash starts with the prefix, and the proof that they are all',
        description:
          "The caller sends the first hex digits of SHA-256 of the normalized domain (as many as the build statement's lookup.prefix_length), never the domain. One quota unit, as /v1/verify. Every answer of a build is padded to one size. In a build of schema .../build/v2 the leaves are the domains' 82-byte entries, and every record must hash to its entry's record_hash. A record its build's map does not commit to is never served (503 UNAVAILABLE). Verify with verifyPrefixAnswer; see docs/private-lookups.md.",
        parameters: [
          {
            name: 'prefix',
            in: 'path',
            required: true,
            description:
              "lookup.prefix_length lowercase hex digits of SHA-256 of the normalized domain (the live build's statement says how many).",
            schema: { type: 'string', pattern: '^[0-9a-f]+$' },
          },
          ifNoneMatch,
        ],
        responses: {
          ...ok('/v1/lookup/{prefix}', 'The prefix answer.', 'PrefixAnswer', { conditional: true }),
          ...notModified('/v1/lookup/{prefix}'),
          ...problems(['INVALID_PREFIX', ...GATED, 'STORE_UNAVAILABLE', 'UNAVAILABLE']),
        },
      },
    },
  };
}
