import { ERROR_REGISTRY, type ErrorCode } from '@merchant-verify/verifier/errors';

// Pieces of the OpenAPI document that its parts share.

/** The error responses of an operation, by status, each describing its codes from the registry. */
export function problems(codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_REGISTRY[code].status!;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: list.map((code) => `${code}: ${ERROR_REGISTRY[code].title}`).join('; '),
        headers: { 'Cache-Control': { schema: { type: 'string', const: 'no-store' } } },
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      },
    ]),
  );
}

export const json = (ref: string, type = 'application/json') => ({ [type]: { schema: { $ref: `#/components/schemas/${ref}` } } });
export const etagHeader = { ETag: { description: 'Strong entity tag of the exact bytes', schema: { type: 'string' } } };
export const ifNoneMatch = { name: 'If-None-Match', in: 'header', required: false, description: 'An ETag from an earlier answer; 304 when it still matches.', schema: { type: 'string' } };
export const notModified = { '304': { description: 'Not modified: If-None-Match matched the ETag.', headers: etagHeader } };
export const publicHeaders = {
  ...etagHeader,
  'Cache-Control': { schema: { type: 'string', const: 'public, max-age=300' } },
  'Access-Control-Allow-Origin': { schema: { type: 'string', const: '*' } },
};
/** Codes any key-gated operation may answer with. */
export const GATED: ErrorCode[] = ['UNAUTHORIZED', 'METHOD_NOT_ALLOWED', 'RATE_LIMITED', 'INTERNAL'];
