import { GATED, ifNoneMatch, notModified, ok, problems } from './openapi-parts.ts';

/** `GET /v1/lookup`, `GET /v1/lookup/{prefix}` and `GET /v1/lookup/{bits}/{hex}`. */
export function lookupPaths(): Record<string, unknown> {
  return {
    '/v1/lookup': {
      get: {
        operationId: 'getLookupStatement',
        tags: ['records'],
        summary: "The live build's statement and its log proof: what a compact private answer is checked against",
        description:
          "Fetched first by a private client: lookup.bits says how many bits of SHA-256 of the normalized domain a bucket has (the client sends exactly that many, never more), lookup.bucket_bytes the one size of every answer. The statement's log proof comes here, beside the answers, never inside them. Key-gated, one quota unit.",
        parameters: [ifNoneMatch],
        responses: {
          ...ok('/v1/lookup', 'The statement and its log proof.', 'LookupStatement', { conditional: true }),
          ...notModified('/v1/lookup'),
          ...problems([...GATED, 'STORE_UNAVAILABLE', 'UNAVAILABLE']),
        },
      },
    },
    '/v1/lookup/{bits}/{hex}': {
      get: {
        operationId: 'getCompactAnswer',
        tags: ['records'],
        summary: "A compact private answer: the map entries of a bucket of the live build's domain map, with the proof that they are all",
        description:
          "The bytes the build wrote for the bucket (docs/private-lookups.md gives the layout): header, the bucket's 82-byte map entries with their two neighbours, the range proof, and padding derived from the map root and the bucket. Every answer of a build is lookup.bucket_bytes long, served as it is (identity, no-transform). One quota unit. Verify with verifyCompactAnswer against GET /v1/lookup's statement.",
        parameters: [
          {
            name: 'bits',
            in: 'path',
            required: true,
            description: "The live build's lookup.bits; any other number is 400 PREFIX_LENGTH_MISMATCH.",
            schema: { type: 'string', pattern: '^[0-9]+$' },
          },
          {
            name: 'hex',
            in: 'path',
            required: true,
            description:
              'The first `bits` bits of SHA-256 of the normalized domain, as ceil(bits/4) lowercase hex digits, the bits past them zero.',
            schema: { type: 'string', pattern: '^[0-9a-f]+$' },
          },
          ifNoneMatch,
        ],
        responses: {
          ...ok('/v1/lookup/{bits}/{hex}', 'The compact answer.', null, { type: 'application/octet-stream', conditional: true }),
          ...notModified('/v1/lookup/{bits}/{hex}'),
          ...problems(['INVALID_PREFIX', 'PREFIX_LENGTH_MISMATCH', ...GATED, 'STORE_UNAVAILABLE', 'UNAVAILABLE']),
        },
      },
    },
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
