import { GATED, problems } from './openapi-parts.ts';

const verdict = { type: ['object', 'null'], required: ['status', 'tier', 'score'], properties: { status: { type: 'string' }, tier: { type: ['string', 'null'] }, score: { type: ['number', 'null'] } } };
const ok = (description: string, schema: Record<string, unknown>) => ({
  '200': { description, headers: { 'Cache-Control': { schema: { type: 'string', const: 'no-store' } } }, content: { 'application/json': { schema } } },
});
const domain = { name: 'domain', in: 'query', required: true, schema: { $ref: '#/components/schemas/DomainParameter' } };

/** `GET /v1/builds`, `/v1/history` and `/v1/changes`: the kept builds (`mvr build --keep`). */
export function historyPaths(): Record<string, unknown> {
  return {
    '/v1/builds': {
      get: {
        operationId: 'listBuilds',
        tags: ['records'],
        summary: 'The kept builds, newest first; the first is the live one',
        responses: {
          ...ok('The kept builds.', {
            type: 'object',
            required: ['builds'],
            properties: { builds: { type: 'array', items: { type: 'object', required: ['id', 'issued_at', 'records'], properties: { id: { type: 'string' }, issued_at: { type: 'string', format: 'date-time' }, records: { type: 'integer', minimum: 0 } } } } },
          }),
          ...problems([...GATED, 'BUILD_NOT_FOUND', 'STORE_UNAVAILABLE']),
        },
      },
    },
    '/v1/history': {
      get: {
        operationId: 'merchantHistory',
        tags: ['records'],
        summary: "A domain's status, tier and score in every kept build that has a record of it, newest first",
        parameters: [domain],
        responses: {
          ...ok('The history (entries is empty for a domain no kept build has).', {
            type: 'object',
            required: ['domain', 'entries'],
            properties: {
              domain: { type: 'string' },
              entries: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['build', 'issued_at', 'status', 'tier', 'score', 'last_audited_at'],
                  properties: { build: { type: 'string' }, issued_at: { type: 'string', format: 'date-time' }, status: { type: 'string' }, tier: { type: ['string', 'null'] }, score: { type: ['number', 'null'] }, last_audited_at: { type: ['string', 'null'], format: 'date-time' } },
                },
              },
            },
          }),
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
          { name: 'since', in: 'query', required: true, description: 'The id of a kept build (GET /v1/builds).', schema: { type: 'string' } },
          { name: 'cursor', in: 'query', required: false, description: 'The `next` of the previous page.', schema: { type: 'string' } },
        ],
        responses: {
          ...ok('At most 1000 changes; `next` is the cursor of the next page, or null.', {
            type: 'object',
            required: ['from', 'to', 'changes', 'next'],
            properties: {
              from: { type: 'string' },
              to: { type: 'string' },
              changes: { type: 'array', items: { type: 'object', required: ['domain', 'before', 'after'], properties: { domain: { type: 'string' }, before: verdict, after: verdict } } },
              next: { type: ['string', 'null'] },
            },
          }),
          ...problems(['INVALID_REQUEST', ...GATED, 'BUILD_NOT_FOUND', 'STORE_UNAVAILABLE']),
        },
      },
    },
  };
}
