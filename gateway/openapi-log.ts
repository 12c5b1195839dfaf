import { LOG_VKEY_PATH } from '../core/layout.ts';
import { GATED, problems } from './openapi-parts.ts';

const text = (description: string, cacheControl: string, cors = true) => ({
  description,
  headers: {
    'Cache-Control': { schema: { type: 'string', const: cacheControl } },
    ETag: { schema: { type: 'string' } },
    ...(cors ? { 'Access-Control-Allow-Origin': { schema: { type: 'string', const: '*' } } } : {}),
  },
  content: { 'text/plain; charset=utf-8': { schema: { type: 'string' } } },
});

/** The transparency log: the key-gated proof, and the public C2SP tlog-tiles files and verifier key. */
export function logPaths(): Record<string, unknown> {
  return {
    '/v1/proof': {
      get: {
        operationId: 'getLogProof',
        tags: ['records'],
        summary: "A C2SP tlog-proof that the domain's live record (or its record in a kept build) is in the public log",
        description:
          'c2sp.org/tlog-proof@v1: `extra` carries the record\'s 32-byte salt (the entry is SHA-256(salt || record bytes)), then the entry index, the RFC 6962 inclusion proof and the signed checkpoint of the record\'s build. Verify with `verifyLogProof` of @merchant-verify/verifier.',
        parameters: [
          { name: 'domain', in: 'query', required: true, schema: { $ref: '#/components/schemas/DomainParameter' } },
          {
            name: 'build',
            in: 'query',
            required: false,
            description: "A kept build (GET /v1/builds): the proof of the domain's record in that build, against the checkpoint that build signed (the record GET /v1/verify?build= answers). The live build by default.",
            schema: { type: 'string' },
          },
        ],
        responses: {
          '200': text('The proof.', 'public, max-age=60, s-maxage=300', false),
          ...problems(['INVALID_DOMAIN', 'INVALID_REQUEST', ...GATED, 'BUILD_NOT_FOUND', 'NOT_IN_LOG', 'STORE_UNAVAILABLE', 'UNAVAILABLE']),
        },
      },
    },
    '/log/checkpoint': {
      get: {
        operationId: 'getLogCheckpoint',
        tags: ['public'],
        summary: 'The log\'s latest checkpoint (c2sp.org/tlog-checkpoint), a signed note',
        security: [],
        responses: { '200': text('Origin, tree size, root hash, and the log\'s signature.', 'public, max-age=5'), ...problems(['NOT_FOUND', 'METHOD_NOT_ALLOWED']) },
      },
    },
    '/log/tile/{path}': {
      get: {
        operationId: 'getLogTile',
        tags: ['public'],
        summary: 'A tile of hashes or an entry bundle (c2sp.org/tlog-tiles): tile/<L>/<N>[.p/<W>], tile/entries/<N>[.p/<W>]',
        security: [],
        parameters: [{ name: 'path', in: 'path', required: true, description: 'The rest of the tile path, e.g. 0/x001/234 or entries/000.p/33.', schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'Concatenated 32-byte hashes, or big-endian uint16 length-prefixed entries; never changes once written.',
            headers: { 'Cache-Control': { schema: { type: 'string', const: 'public, max-age=31536000, immutable' } } },
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
          ...problems(['NOT_FOUND', 'METHOD_NOT_ALLOWED']),
        },
      },
    },
    [LOG_VKEY_PATH]: {
      get: {
        operationId: 'getLogVerifierKey',
        tags: ['public'],
        summary: "The log's verifier key in signed-note form: <name>+<key ID>+<base64(0x01 || Ed25519 public key)>",
        security: [],
        responses: { '200': text('The verifier key, one line.', 'public, max-age=300'), ...problems(['NOT_FOUND', 'METHOD_NOT_ALLOWED']) },
      },
    },
  };
}
