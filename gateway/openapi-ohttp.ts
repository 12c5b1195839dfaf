import { OHTTP_GATEWAY_PATH, OHTTP_MEDIA } from '../core/ohttp.ts';
import { cacheHeaderDocs } from './cache-policy.ts';
import { problems, routeHeaders } from './openapi-parts.ts';

/** `GET` and `POST /.well-known/ohttp-gateway`: the key configuration and the Oblivious Gateway Resource. */
export function ohttpPaths(): Record<string, unknown> {
  const open = { tags: ['public'], security: [] };
  return {
    [OHTTP_GATEWAY_PATH]: {
      get: {
        operationId: 'getOhttpKeys',
        ...open,
        summary: "The gateway's Oblivious HTTP key configuration (RFC 9540)",
        description:
          "application/ohttp-keys (RFC 9458 section 3.2): DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM. The live build's statement names its SHA-256 (ohttp.key_config_sha256); a client uses no other. 404 when the gateway has no key.",
        responses: {
          '200': { description: 'The key configuration.', headers: routeHeaders(OHTTP_GATEWAY_PATH), content: { [OHTTP_MEDIA.keys]: {} } },
          ...problems(['NOT_FOUND', 'METHOD_NOT_ALLOWED']),
        },
      },
      post: {
        operationId: 'postOhttpRequest',
        ...open,
        summary: 'An encapsulated request (RFC 9458), usually through a relay: a prefix lookup, the key set or the log files',
        description:
          'The request inside is Binary HTTP (RFC 9292), with its own Authorization: it is answered by the same routes, key check and quota as when sent directly, and its answer (an error too) comes back sealed with status 200. A request inside for another route is answered OHTTP_ROUTE_REFUSED (403), sealed. See docs/private-lookups.md.',
        requestBody: { required: true, content: { [OHTTP_MEDIA.request]: { schema: { description: 'At most 64 KiB' } } } },
        responses: {
          '200': {
            description: 'The sealed answer to the request inside.',
            headers: cacheHeaderDocs({ cacheControl: 'no-store' }),
            content: { [OHTTP_MEDIA.response]: {} },
          },
          ...problems([
            'OHTTP_DECAPSULATION_FAILED',
            'NOT_FOUND',
            'METHOD_NOT_ALLOWED',
            'PAYLOAD_TOO_LARGE',
            'UNSUPPORTED_MEDIA_TYPE',
            'OHTTP_KEY_UNKNOWN',
          ]),
        },
      },
    },
  };
}
