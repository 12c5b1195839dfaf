import { ERROR_REGISTRY, isMvrError, type ErrorCode } from '@merchant-verify/verifier/errors';

/** An RFC 9457 problem document: status and title from the error registry, and the stable code. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
}

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
