import { ERROR_REGISTRY, type ErrorCode, isMvrError } from '../core/errors/errors.ts';
import { withheldDetail } from '../core/errors/problem-document.ts';

/**
 * A failure as an MCP tool result: `isError`, and a text that starts with the error's registry
 * code and title (`INVALID_DOMAIN (Invalid domain): ...`), so an agent can branch on the code.
 * A server failure says its code's words and the request id its cause is logged under, never
 * the error's message, as its problem document does. No structuredContent: clients validate it
 * against the output schema even on errors.
 */
export function toolError(error: unknown, requestId?: string): { isError: true; content: { type: 'text'; text: string }[] } {
  const code: ErrorCode = isMvrError(error) ? error.code : 'INTERNAL';
  const withheld = withheldDetail(code);
  const message = withheld === null ? (error as Error).message : requestId ? `${withheld} (request_id ${requestId})` : withheld;
  return { isError: true, content: [{ type: 'text', text: `${code} (${ERROR_REGISTRY[code].title}): ${message}` }] };
}
