import type { ErrorCode } from '../core/errors/registry.ts';
import { LOG_VKEY_PATH } from '../core/layout.ts';
import { domainParameter, GATED, ifNoneMatch, notModified, ok, problems } from './openapi-parts.ts';

const TEXT = 'text/plain; charset=utf-8';

/** The public log files' problems: RATE_LIMITED when too many requests without a key are in flight at once (their own budget). */
const PUBLIC_LOG: ErrorCode[] = ['NOT_FOUND', 'METHOD_NOT_ALLOWED', 'RATE_LIMITED', 'STORE_UNAVAILABLE'];

/** The transparency log: the key-gated proof, and the public C2SP tlog-tiles files and verifier key. */
export function logPaths(): Record<string, unknown> {
  return {
    '/v1/proof': {
      get: {
        operationId: 'getLogProof',
        tags: ['records'],
        summary: "A C2SP tlog-proof that the domain's live record (or its record in a kept build) is in the public log",
        description:
          'c2sp.org/tlog-proof@v1 of the record against the checkpoint its build signed. Verify with `verifyLogProof` of @merchant-verify/verifier.',
        parameters: [
          domainParameter,
          {
            name: 'build',
            in: 'query',
            required: false,
            description:
              "A kept build (GET /v1/builds): the proof of the domain's record in that build, against the checkpoint that build signed (the record GET /v1/verify?build= answers). The live build by default.",
            schema: { type: 'string' },
          },
          ifNoneMatch,
        ],
        responses: {
          ...ok('/v1/proof', 'The proof.', 'LogProof', { type: TEXT, conditional: true }),
          ...notModified('/v1/proof'),
          ...problems(['INVALID_DOMAIN', 'INVALID_REQUEST', ...GATED, 'BUILD_NOT_FOUND', 'NOT_IN_LOG', 'STORE_UNAVAILABLE', 'UNAVAILABLE']),
        },
      },
    },
    '/log/checkpoint': {
      get: {
        operationId: 'getLogCheckpoint',
        tags: ['public'],
        summary: "The log's latest checkpoint (c2sp.org/tlog-checkpoint), a signed note",
        security: [],
        parameters: [ifNoneMatch],
        responses: {
          ...ok('/log/checkpoint', "Origin, tree size, root hash, and the log's signature.", 'Checkpoint', {
            type: TEXT,
            conditional: true,
          }),
          ...notModified('/log/checkpoint'),
          ...problems(PUBLIC_LOG),
        },
      },
    },
    '/log/tile/{path}': {
      get: {
        operationId: 'getLogTile',
        tags: ['public'],
        summary: 'A tile of hashes or an entry bundle (c2sp.org/tlog-tiles): tile/<L>/<N>[.p/<W>], tile/entries/<N>[.p/<W>]',
        description: 'Served once the published checkpoint commits to it; never changes after.',
        security: [],
        parameters: [
          {
            name: 'path',
            in: 'path',
            required: true,
            description: 'The rest of the tile path, e.g. 0/x001/234 or entries/000.p/33.',
            schema: { type: 'string' },
          },
          ifNoneMatch,
        ],
        responses: {
          ...ok('/log/tile/{path}', 'Concatenated 32-byte hashes, or big-endian uint16 length-prefixed entries.', null, {
            type: 'application/octet-stream',
            conditional: true,
          }),
          ...notModified('/log/tile/{path}'),
          ...problems(PUBLIC_LOG),
        },
      },
    },
    [LOG_VKEY_PATH]: {
      get: {
        operationId: 'getLogVerifierKey',
        tags: ['public'],
        summary: "The log's verifier key in signed-note form",
        security: [],
        parameters: [ifNoneMatch],
        responses: {
          ...ok(LOG_VKEY_PATH, 'The verifier key, one line.', 'LogVerifierKey', { type: TEXT, conditional: true }),
          ...notModified(LOG_VKEY_PATH),
          ...problems(PUBLIC_LOG),
        },
      },
    },
  };
}
