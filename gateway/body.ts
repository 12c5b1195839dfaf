import type { H3Event } from 'h3';
import { READ_LIMITS } from '#shared';
import { PayloadTooLargeError } from '../core/errors/errors.ts';

/** The most a request body may hold (`POST /mcp`, `POST /v1/verify/batch`): the limits table's `requestBody`. */
export const MAX_BODY = READ_LIMITS.requestBody.bytes;

/** Reads a request body, at most {@link MAX_BODY} bytes (else 413 PAYLOAD_TOO_LARGE, before the rest arrives). */
export async function readBody(event: H3Event): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of event.node.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new PayloadTooLargeError(`the request body is over ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
