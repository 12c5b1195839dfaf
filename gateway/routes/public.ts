import type { H3Event } from 'h3';
import { z } from 'zod';
import { recordSchema } from '../../core/record.ts';
import { matchesIfNoneMatch, reply, strongEtag } from '../http/reply.ts';
import type { GatewayContext } from '../context.ts';
import { openApiDocument } from '../openapi.ts';

/** Anyone may fetch these; a CDN may cache them. */
const PUBLIC_HEADERS = { 'access-control-allow-origin': '*', 'cache-control': 'public, max-age=300' };

/** `GET /.well-known/merchant-verify-keys.json`: the file the build published, as it is. */
export async function handleKeySet(event: H3Event, ctx: GatewayContext): Promise<void> {
  const { bytes, etag } = ctx.store.keys.get();
  await sendPublic(event, bytes, etag, 'application/jwk-set+json');
}

/** The record's JSON Schema (2020-12), generated from the zod schema the build and gateway check with. */
export function recordJsonSchema(schemaUrl: string): Record<string, unknown> {
  return { $id: schemaUrl, ...z.toJSONSchema(recordSchema, { target: 'draft-2020-12' }) };
}

/** `GET /schemas/verification/v1`. */
export async function handleSchema(event: H3Event, ctx: GatewayContext): Promise<void> {
  const bytes = memo(`schema:${ctx.schemaUrl}`, () => JSON.stringify(recordJsonSchema(ctx.schemaUrl), null, 2));
  await sendPublic(event, bytes.body, bytes.etag, 'application/schema+json');
}

/** `GET /openapi.json`: OpenAPI 3.1 of the HTTP API. */
export async function handleOpenApi(event: H3Event, ctx: GatewayContext): Promise<void> {
  const bytes = memo(`openapi:${ctx.issuer}`, () => JSON.stringify(openApiDocument(ctx, recordJsonSchema(ctx.schemaUrl)), null, 2));
  await sendPublic(event, bytes.body, bytes.etag, 'application/json');
}

async function sendPublic(event: H3Event, body: Buffer, etag: string, type: string): Promise<void> {
  const headers = { ...PUBLIC_HEADERS, 'content-type': type, etag };
  if (matchesIfNoneMatch(event.node.req.headers['if-none-match'], etag)) return reply(event, 304, headers, null);
  return reply(event, 200, headers, body);
}

const memos = new Map<string, { body: Buffer; etag: string }>();
function memo(key: string, make: () => string): { body: Buffer; etag: string } {
  let hit = memos.get(key);
  if (!hit) {
    const body = Buffer.from(make());
    hit = { body, etag: strongEtag(body) };
    memos.set(key, hit);
  }
  return hit;
}
