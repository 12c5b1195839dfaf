import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { BHttpDecoder, BHttpEncoder } from 'bhttp-js';
import { defineEventHandler, getRequestHeader, type H3Event, type toPlainHandler } from 'h3';
import {
  type MvrError,
  NotFoundError,
  OhttpDecapsulationError,
  OhttpKeyUnknownError,
  OhttpRouteRefusedError,
  UnsupportedMediaTypeError,
} from '../../core/errors/errors.ts';
import { LOG_VKEY_PATH } from '../../core/layout.ts';
import { decapsulateRequest, OHTTP_MEDIA, type OhttpGatewayKey, type OpenedRequest } from '../../core/ohttp.ts';
import { sendAnswer } from '../answer.ts';
import { readBody } from '../body.ts';
import { cacheHeaders, ENCAPSULATED_ANSWER_HEADERS } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { problemAnswer } from '../problem.ts';
import { LOG_PREFIX } from './log.ts';
import { LOOKUP_PREFIX } from './lookup.ts';

/** The gateway app as a handler of requests made in memory (h3's toPlainHandler): where an opened request is answered. */
export type InnerHandler = ReturnType<typeof toPlainHandler>;

/**
 * What may be asked through Oblivious HTTP: a prefix or bucket lookup, and what a private client fetches
 * to ask and verify it (the live statement of `GET /v1/lookup`, the key set, the log's key, checkpoint and tiles). Never a route whose
 * request names a domain: a relay hides the caller's address, and a lookup by name would hand the
 * gateway the very thing a prefix keeps from it.
 */
export function offeredThroughOhttp(method: string, path: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  return (
    path.startsWith(LOOKUP_PREFIX) ||
    path === LOOKUP_PREFIX.slice(0, -1) ||
    path === KEY_SET_PATH ||
    path === LOG_VKEY_PATH ||
    path.startsWith(LOG_PREFIX)
  );
}

/** `GET /.well-known/ohttp-gateway`: the key configuration (RFC 9540, `application/ohttp-keys`); 404 when the gateway has no key. */
export function ohttpKeysRoute(services: GatewayServices) {
  return defineEventHandler((event) => {
    const key = requireKey(services, event);
    return sendAnswer(event, {
      status: 200,
      headers: { 'content-type': OHTTP_MEDIA.keys, ...cacheHeaders('/.well-known/ohttp-gateway') },
      body: key.configBytes,
    });
  });
}

/**
 * `POST /.well-known/ohttp-gateway` (`message/ohttp-req`): the Oblivious Gateway Resource. The
 * outer request is the relay's, so nothing of it reaches the inner one: the inner request, once
 * opened, is answered by the gateway's own routes (the same key check, the quota of the key it
 * carries, the same access line as a lookup sent directly), in memory, and its answer (an error
 * too) goes back sealed as `message/ohttp-res`. Refused in the clear only what cannot be opened:
 * the media type (415), the size (413), another key (422), a request that does not open (400).
 */
export function ohttpGatewayRoute(services: GatewayServices, inner: InnerHandler) {
  const decoder = new BHttpDecoder();
  const encoder = new BHttpEncoder();
  return defineEventHandler(async (event) => {
    const key = requireKey(services, event);
    const type = getRequestHeader(event, 'content-type') ?? '';
    if (type.split(';')[0]!.trim().toLowerCase() !== OHTTP_MEDIA.request)
      throw new UnsupportedMediaTypeError(`Content-Type must be ${OHTTP_MEDIA.request}, not "${type || '(none)'}"`);
    const opened = await open(key, await readBody(event));
    let request: Request;
    try {
      request = decoder.decodeRequest(opened.request);
    } catch (error) {
      throw new OhttpDecapsulationError(`the encapsulated request is not a Binary HTTP request: ${(error as Error).message}`);
    }
    const url = new URL(request.url);
    const answer = offeredThroughOhttp(request.method, url.pathname)
      ? await inner({ method: request.method, path: url.pathname + url.search, headers: innerHeaders(request.headers) })
      : refusedAnswer(services, request.method, url.pathname);
    // In memory a HEAD's answer keeps its body (node:http would leave it out on the wire): left out here.
    const bodiless = answer.status === 304 || request.method === 'HEAD' || answer.body === undefined;
    const response = new Response(bodiless ? null : (answer.body as BodyInit), {
      status: answer.status,
      headers: answer.headers,
    });
    return sendAnswer(event, {
      status: 200,
      headers: { 'content-type': OHTTP_MEDIA.response, ...ENCAPSULATED_ANSWER_HEADERS },
      body: opened.sealResponse(await encoder.encodeResponse(response)),
    });
  });
}

function requireKey(services: GatewayServices, event: H3Event): OhttpGatewayKey {
  if (!services.ohttpKey) throw new NotFoundError(event.path);
  return services.ohttpKey;
}

async function open(key: OhttpGatewayKey, body: Buffer): Promise<OpenedRequest> {
  let opened: OpenedRequest | null;
  try {
    opened = await decapsulateRequest(key, body);
  } catch (error) {
    throw new OhttpDecapsulationError(`the encapsulated request cannot be opened with this gateway's key: ${(error as Error).message}`);
  }
  if (!opened)
    throw new OhttpKeyUnknownError(
      `the encapsulated request is for a key id or suite this gateway does not hold; fetch ${OHTTP_MEDIA.keys} again`,
    );
  return opened;
}

/** The inner request's own fields only; Content-Length and the like are the in-memory request's. */
function innerHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection') out[name] = value;
  });
  return out;
}

/** The answer, sealed like any other, to an inner request for a route not offered through a relay. */
function refusedAnswer(
  services: GatewayServices,
  method: string,
  path: string,
): { status: number; headers: Record<string, string>; body: unknown } {
  const error: MvrError = new OhttpRouteRefusedError(
    `${method} ${path} is not offered through Oblivious HTTP: only GET of ${LOOKUP_PREFIX.slice(0, -1)} and ${LOOKUP_PREFIX}..., the key set and the log's files`,
  );
  const answer = problemAnswer(error, services.issuer, undefined);
  return { status: answer.status, headers: { ...answer.headers }, body: answer.body };
}
