import { z } from 'zod';
import { ERROR_REGISTRY, type ErrorCode, HTTP_ERROR_CODES, isMvrError } from './errors.ts';

/**
 * An RFC 9457 problem document, as every error of the HTTP API is answered and as a batch (over
 * HTTP or MCP) carries one in place of a record: status and title from the error registry, and
 * the stable code.
 */
export const problemSchema = z
  .strictObject({
    type: z.url().describe('`https://{issuer}/problems/<code in kebab case>`'),
    title: z.string().describe("The code's title"),
    status: z.int().min(400).max(599).describe('The HTTP status'),
    detail: z.string().min(1).describe('What is wrong, naming the query parameter, header or member'),
    code: z.enum(HTTP_ERROR_CODES).describe('Stable, machine-readable code'),
  })
  .meta({ title: 'Problem' });

export type ProblemDocument = z.infer<typeof problemSchema>;

/** The `type` URI of a problem code: `https://{issuer}/problems/invalid-domain`. */
export function problemType(issuer: string, code: string): string {
  return `https://${issuer}/problems/${code.toLowerCase().replace(/_/g, '-')}`;
}

/** The error's code when the HTTP API answers with it; anything else is INTERNAL. */
export function httpCodeOf(error: unknown): ErrorCode {
  return isMvrError(error) && ERROR_REGISTRY[error.code].status !== null ? error.code : 'INTERNAL';
}

/**
 * The problem document of an error, as HTTP answers carry it and as a batch (over HTTP or MCP)
 * carries it in place of a record: `detail` from the error, never from an unexpected one.
 */
export function problemDocument(error: unknown, issuer: string): ProblemDocument {
  const code = httpCodeOf(error);
  const { status, title } = ERROR_REGISTRY[code];
  const detail = code === 'INTERNAL' ? 'an unexpected error occurred; it has been logged' : (error as Error).message;
  return { type: problemType(issuer, code), title, status: status!, detail, code };
}
