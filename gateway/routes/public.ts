import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { defineEventHandler, type H3Event } from 'h3';
import { strongEtag } from '../../core/etag.ts';
import { conditionalAnswer, sendAnswer } from '../answer.ts';
import { type CachedRoute, cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { bundleJsonSchema, openApiDocument, recordJsonSchema } from '../openapi.ts';

/** `GET /.well-known/merchant-verify-keys.json`: the file the build published, as it is. */
export function keySetRoute(services: GatewayServices) {
  return defineEventHandler((event) => {
    const { bytes, etag } = services.records.keys.get();
    return sendPublic(event, KEY_SET_PATH, 'application/jwk-set+json', { bytes, etag });
  });
}

/** `GET /schemas/verification/v1`: the record's JSON Schema (2020-12). */
export function schemaRoute(services: GatewayServices) {
  const document = fixedDocument(recordJsonSchema(services.schemaUrl));
  return defineEventHandler((event) => sendPublic(event, '/schemas/verification/v1', 'application/schema+json', document));
}

/** `GET /schemas/bundle/v1`: the offline bundle's JSON Schema (2020-12). */
export function bundleSchemaRoute(services: GatewayServices) {
  const document = fixedDocument(bundleJsonSchema(services.issuer));
  return defineEventHandler((event) => sendPublic(event, '/schemas/bundle/v1', 'application/schema+json', document));
}

/** `GET /openapi.json`: the OpenAPI 3.1 description of the HTTP API. */
export function openApiRoute(services: GatewayServices) {
  const document = fixedDocument(openApiDocument({ issuer: services.issuer, schemaUrl: services.schemaUrl }));
  return defineEventHandler((event) => sendPublic(event, '/openapi.json', 'application/json', document));
}

function fixedDocument(value: unknown): { bytes: Buffer; etag: string } {
  const bytes = Buffer.from(JSON.stringify(value, null, 2));
  return { bytes, etag: strongEtag(bytes) };
}

/** Anyone may fetch these, without a key; a CDN may cache them. */
function sendPublic(event: H3Event, route: CachedRoute, type: string, document: { bytes: Buffer; etag: string }): void | Promise<void> {
  return sendAnswer(event, conditionalAnswer(event, { ...cacheHeaders(route), 'content-type': type }, document.etag, document.bytes));
}
