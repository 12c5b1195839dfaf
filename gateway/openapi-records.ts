import { domainInputSchema } from '../core/rules/domain-input.ts';
import { content, domainParameter, GATED, ifNoneMatch, notModified, ok, problems, routeHeaders } from './openapi-parts.ts';

// The key-gated answers about records: one domain's record, a batch, the kept builds and their
// history, an absence proof, a bundle, a private lookup, and MCP, which answers the same.

/** A JSON-RPC 2.0 message (the MCP SDK's to describe in full). */
const JSON_RPC = { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' } } };

/** Every key-gated route that answers with records (tag `records`). */
export function recordPaths(): Record<string, unknown> {
  return {
    '/v1/verify': {
      get: {
        operationId: 'verifyMerchant',
        tags: ['records'],
        summary: 'The signed verification record of a domain',
        description: 'A valid domain that was never audited returns 200 with status "unverified" and score null, never 404.',
        parameters: [
          { ...domainParameter, description: domainInputSchema.description },
          {
            name: 'build',
            in: 'query',
            required: false,
            description: 'A kept build (GET /v1/builds): the record as that build signed it. The live build by default.',
            schema: { type: 'string' },
          },
          ifNoneMatch,
        ],
        responses: {
          ...ok('/v1/verify', 'The record, byte for byte as signed.', 'VerificationRecord', { conditional: true }),
          ...notModified('/v1/verify'),
          ...problems(['INVALID_DOMAIN', 'INVALID_REQUEST', ...GATED, 'BUILD_NOT_FOUND', 'STORE_UNAVAILABLE', 'UNAVAILABLE']),
        },
      },
    },
    ...batchPaths(),
    ...historyPaths(),
    ...absencePaths(),
    ...bundlePaths(),
    ...lookupPaths(),
    '/mcp': {
      post: {
        operationId: 'mcp',
        tags: ['records'],
        summary: 'MCP Streamable HTTP endpoint (tools verify_merchant, verify_merchants, merchant_history)',
        description: 'Stateless JSON-RPC; the tool answers with the same record bytes as GET /v1/verify.',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { ...JSON_RPC, description: 'A JSON-RPC 2.0 message, at most 64 KiB' } } },
        },
        responses: {
          '200': {
            description: 'JSON-RPC response.',
            headers: routeHeaders('/mcp'),
            content: { 'application/json': { schema: JSON_RPC } },
          },
          '202': { description: 'A notification was accepted.', headers: routeHeaders('/mcp') },
          '400': {
            description: 'The body is not JSON (JSON-RPC parse error).',
            headers: routeHeaders('/mcp'),
            content: { 'application/json': { schema: JSON_RPC } },
          },
          ...problems(['PAYLOAD_TOO_LARGE', ...GATED]),
        },
      },
    },
  };
}

/** `POST /v1/verify/batch`. */
function batchPaths(): Record<string, unknown> {
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

/** `GET /v1/builds`, `/v1/history` and `/v1/changes`: the kept builds (`mvr build --keep`). */
function historyPaths(): Record<string, unknown> {
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

/** `GET /v1/absence`. */
function absencePaths(): Record<string, unknown> {
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
function bundlePaths(): Record<string, unknown> {
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

/** `GET /v1/lookup` and `GET /v1/lookup/{bits}/{hex}`. */
function lookupPaths(): Record<string, unknown> {
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
  };
}
