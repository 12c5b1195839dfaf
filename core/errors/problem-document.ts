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
    request_id: z
      .string()
      .optional()
      .describe("With a server failure (5xx): the id of the gateway's log line that says where it failed; the answer never does"),
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
 * What the problem document of a code says in place of its error's message, when that message may
 * say where (a server failure: a path, a bucket, an object key, a URL, a system error); null when
 * the message is what the answer says (it names the caller's own input: a query parameter, a header).
 */
export function withheldDetail(code: ErrorCode): string | null {
  const entry = ERROR_REGISTRY[code];
  return 'detail' in entry ? entry.detail : null;
}

/**
 * The problem document of an error, as HTTP answers carry it and as a batch (over HTTP or MCP)
 * carries it in place of a record: `detail` from the error, never from an unexpected one, and
 * never from a server failure ({@link withheldDetail}), whose cause is logged under `requestId`.
 */
export function problemDocument(error: unknown, issuer: string, requestId?: string): ProblemDocument {
  const code = httpCodeOf(error);
  const { status, title } = ERROR_REGISTRY[code];
  const withheld = withheldDetail(code);
  const problem: ProblemDocument = {
    type: problemType(issuer, code),
    title,
    status: status!,
    detail: withheld ?? (error as Error).message,
    code,
  };
  if (withheld !== null && requestId !== undefined) problem.request_id = requestId;
  return problem;
}

/**
 * An error's whole story, for a log line (never an answer): its message and its causes' messages,
 * or the stack of an error that is not one of ours.
 */
export function causeOf(error: unknown): string {
  if (!isMvrError(error)) return String((error as Error)?.stack ?? error);
  const parts = [error.message];
  for (let cause = error.cause, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (!parts.at(-1)!.includes(cause.message)) parts.push(cause.message);
  }
  return parts.join(': ');
}
