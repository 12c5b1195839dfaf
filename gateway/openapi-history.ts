import { domainParameter, GATED, ok, problems } from './openapi-parts.ts';

/** `GET /v1/builds`, `/v1/history` and `/v1/changes`: the kept builds (`mvr build --keep`). */
export function historyPaths(): Record<string, unknown> {
  return {
    '/v1/builds': {
      get: {
        operationId: 'listBuilds',
        tags: ['records'],
        summary: 'The kept builds, newest first; the first is the live one',
        responses: {
          ...ok('/v1/builds', 'The kept builds.', 'KeptBuilds'),
          ...problems([...GATED, 'BUILD_NOT_FOUND', 'STORE_UNAVAILABLE']),
        },
      },
    },
    '/v1/history': {
      get: {
        operationId: 'merchantHistory',
        tags: ['records'],
        summary: "A domain's status, tier and score in every kept build that has a record of it, newest first",
        parameters: [domainParameter],
        responses: {
          ...ok('/v1/history', 'The history (entries is empty for a domain no kept build has).', 'History'),
          ...problems(['INVALID_DOMAIN', ...GATED, 'BUILD_NOT_FOUND', 'STORE_UNAVAILABLE', 'UNAVAILABLE']),
        },
      },
    },
    '/v1/changes': {
      get: {
        operationId: 'listChanges',
        tags: ['records'],
        summary: 'What changed (status, tier, score; newly audited; dropped) from a kept build to the live one, as the build computed it',
        parameters: [
          {
            name: 'since',
            in: 'query',
            required: true,
            description: 'The id of a kept build (GET /v1/builds).',
            schema: { type: 'string' },
          },
          { name: 'cursor', in: 'query', required: false, description: 'The `next` of the previous page.', schema: { type: 'string' } },
        ],
        responses: {
          ...ok('/v1/changes', 'At most 1000 changes; `next` is the cursor of the next page, or null.', 'Changes'),
          ...problems(['INVALID_REQUEST', ...GATED, 'BUILD_NOT_FOUND', 'STORE_UNAVAILABLE']),
        },
      },
    },
  };
}
