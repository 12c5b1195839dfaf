import { GATED, ifNoneMatch, problems, ref, routeHeaders } from './openapi-parts.ts';

const FILES = '/v1/mirror/builds/{build}/{file}';
const header = (description: string, schema: Record<string, unknown>) => ({
  required: true,
  description,
  schema: { type: 'string', ...schema },
});
/** What a file's answers carry besides its cache headers. */
const fileHeaders = {
  ...routeHeaders(FILES, true),
  'Accept-Ranges': header('A file is served a byte range at a time as well', { const: 'bytes' }),
  'Content-Length': header('The bytes of the answer', { pattern: '^\\d+$' }),
};
/** A file's bytes: the JSON files as JSON, every other file (a pack, the domain map, a checkpoint) as bytes. */
const fileContent = { 'application/octet-stream': {}, 'application/json': {} };

/** `GET /v1/mirror` and `GET /v1/mirror/builds/{build}/{file}`: whole builds for a mirror-scoped key (docs/mirrors.md). */
export function mirrorPaths(): Record<string, unknown> {
  return {
    '/v1/mirror': {
      get: {
        operationId: 'getMirrorHead',
        tags: ['records'],
        summary: "The live build's id and its signed statement, which lists every pack with its SHA-256 and length",
        description:
          'For a key made with `mvr apikey create --scope mirror` only (an ordinary key is 403 FORBIDDEN); one quota unit. A gateway whose store names no build (an http(s) origin) has no builds to mirror: 404 BUILD_NOT_FOUND.',
        responses: {
          '200': {
            description: 'The live build.',
            headers: routeHeaders('/v1/mirror'),
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['build', 'statement'],
                  properties: { build: { type: 'string' }, statement: ref('BuildStatement') },
                },
              },
            },
          },
          ...problems([...GATED, 'FORBIDDEN', 'BUILD_NOT_FOUND', 'STORE_UNAVAILABLE']),
        },
      },
    },
    [FILES]: {
      get: {
        operationId: 'getMirrorFile',
        tags: ['records'],
        summary: 'A file of the live or a kept build, whole or one byte range',
        description:
          "For a key made with `mvr apikey create --scope mirror` only; one quota unit per MiB sent (rounded up, at least one), paid before the first byte from the length asked for, and one of the key's streams in this gateway process (`--streams-per-key`, else 429 TOO_MANY_STREAMS) while it is sent. `file` is `statement.json`, `domain-map`, `pack-index`, `manifest.json`, `log-checkpoint`, `served-checkpoint`, `index.jsonl`, `packs/<SHA-256 hex>.jsonl` or `<shard>/log.jsonl` (a shard's log entries, for record proofs); any other name, or a file the build lacks, is 404 NOT_FOUND. One `Range: bytes=a-b`, `a-` or `-n` gets 206 (`-n` longer than the file: all of it); several ranges get the whole file. A pack's ETag is its SHA-256 (its name).",
        parameters: [
          {
            name: 'build',
            in: 'path',
            required: true,
            description: 'A kept build (GET /v1/builds), or the live one (GET /v1/mirror).',
            schema: { type: 'string' },
          },
          {
            name: 'file',
            in: 'path',
            required: true,
            description: 'A file of the build, by its name in the build (a pack with its packs/ folder).',
            schema: { type: 'string' },
          },
          { name: 'Range', in: 'header', required: false, description: 'One byte range (RFC 9110 14.1.2).', schema: { type: 'string' } },
          ifNoneMatch,
        ],
        responses: {
          '200': { description: 'The whole file.', headers: fileHeaders, content: fileContent },
          '206': {
            description: 'The range asked for.',
            headers: {
              ...fileHeaders,
              'Content-Range': header('The range sent, and the length of the whole file', { pattern: '^bytes \\d+-\\d+/\\d+$' }),
            },
            content: fileContent,
          },
          '304': { description: 'Not modified: If-None-Match matched the ETag.', headers: routeHeaders(FILES, true) },
          ...problems([
            ...GATED,
            'FORBIDDEN',
            'NOT_FOUND',
            'BUILD_NOT_FOUND',
            'RANGE_NOT_SATISFIABLE',
            'TOO_MANY_STREAMS',
            'STORE_UNAVAILABLE',
          ]),
        },
      },
    },
  };
}
