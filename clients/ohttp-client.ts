import { type AnswerSource, gatewaySource } from '@merchant-verify/verifier';
import { BHttpDecoder, BHttpEncoder } from 'bhttp-js';
import { verifyBuildStatement } from '#shared';
import { FetchFailedError, OhttpKeyConfigError } from '../core/errors/errors.ts';
import { READ_LIMITS } from '../core/limits.ts';
import { encapsulateRequest, keyConfigSha256, OHTTP_GATEWAY_PATH, OHTTP_MEDIA, parseKeyConfigs } from '../core/ohttp.ts';
import { boundedGet, boundedPost } from './bounded-get.ts';

// The client side of Oblivious HTTP (RFC 9458), kept out of the verifier package (whose three
// dependencies are spent): a `fetch` that sends every request sealed through a relay, given to the
// package's own online client, so a private lookup through a relay is the same lookup, verified
// by the same code, whatever its answer's format.

/** A gateway's key configuration as fetched: its bytes (whose SHA-256 the build signs) and where they came from. */
export interface FetchedKeyConfig {
  bytes: Buffer;
  url: string;
}

/** `GET /.well-known/ohttp-gateway` of a gateway (RFC 9540), within READ_LIMITS.ohttpKeys; FETCH_FAILED when it has none. */
export async function fetchKeyConfig(baseUrl: string): Promise<FetchedKeyConfig> {
  const url = `${baseUrl.replace(/\/+$/, '')}${OHTTP_GATEWAY_PATH}`;
  const res = await boundedGet(url, { limit: READ_LIMITS.ohttpKeys, headers: { accept: OHTTP_MEDIA.keys } });
  if (res.statusCode !== 200)
    throw new FetchFailedError(`${url} answered ${res.statusCode}: the gateway publishes no Oblivious HTTP key`, res.statusCode);
  return { bytes: res.body, url };
}

/**
 * A `fetch` that sends each request as Binary HTTP (RFC 9292), sealed to the gateway's key
 * configuration, in a `message/ohttp-req` POST to `relayUrl`, and opens the sealed answer. The
 * relay sees the caller's address and the sizes, never the request (its path, its API key); the
 * gateway sees the relay's address, never the caller's. An answer that is not sealed (the relay's
 * own refusal, or the gateway's refusal of the outer request) is handed back as it is, so the
 * caller reports its status and problem code.
 */
export function ohttpFetch(relayUrl: string, keyConfig: Uint8Array): typeof globalThis.fetch {
  const config = parseKeyConfigs(keyConfig);
  const encoder = new BHttpEncoder();
  const decoder = new BHttpDecoder();
  return async (input, init) => {
    const request = new Request(input, init);
    const sealed = await encapsulateRequest(config, await encoder.encodeRequest(request));
    const res = await boundedPost(relayUrl, sealed.bytes, {
      limit: READ_LIMITS.gatewayAnswer,
      headers: { 'content-type': OHTTP_MEDIA.request, accept: OHTTP_MEDIA.response },
    });
    const type = String(res.headers['content-type'] ?? '');
    if (res.statusCode !== 200 || type !== OHTTP_MEDIA.response)
      return new Response(new Uint8Array(res.body), { status: res.statusCode, headers: { 'content-type': type } });
    let opened: Uint8Array;
    try {
      opened = sealed.response.open(res.body);
    } catch (error) {
      throw new FetchFailedError(`the sealed answer through ${new URL(relayUrl).origin} does not open: ${(error as Error).message}`);
    }
    return decoder.decodeResponse(opened);
  };
}

/**
 * The verifier package's gateway source with every request through `relayUrl`, bound to the build
 * before any prefix leaves: the live statement (`GET /v1/lookup`, through the relay) is fetched
 * first, its signature checked against the key set, and it must name the SHA-256 of `keyConfig`
 * (`ohttp.key_config_sha256`); else OHTTP_KEY_CONFIG_INVALID and no prefix is sent. So a gateway
 * that gave this client a key of its own (to tell its requests apart) learns nothing but that the
 * statement was asked. Each statement asked later is checked so too (a compact answer is bound
 * to it by its map root); the verifier then checks the same signatures again.
 */
export function ohttpSource(options: {
  baseUrl: string;
  apiKey: string;
  relayUrl: string;
  keyConfig: FetchedKeyConfig;
  /** The key set the statement is checked against (a caller's given or pinned one); default the gateway's, through the relay. */
  keySet?: () => Promise<unknown>;
}): AnswerSource {
  const source = gatewaySource({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    fetch: ohttpFetch(options.relayUrl, options.keyConfig.bytes),
  });
  const expected = keyConfigSha256(options.keyConfig.bytes);
  const url = options.keyConfig.url;
  const keySet = options.keySet ?? source.keySet;
  /** The last statement checked (a promise while it is), which every lookup waits on; dropped when refused. */
  let bound: Promise<unknown> | undefined;
  const lookupStatement = (): Promise<unknown> => {
    const checked = source.lookupStatement!().then(async (head) => {
      const statement = (head as { statement?: unknown } | null)?.statement;
      const signed = verifyBuildStatement(statement, undefined, await keySet());
      if (!signed.valid)
        throw new OhttpKeyConfigError(
          `the gateway's lookup statement does not verify against the key set (${signed.code}: ${signed.message}), so nothing says the key configuration at ${url} is the build's: no prefix was sent`,
        );
      checkBinding(statement, expected, url);
      return head;
    });
    bound = checked;
    checked.catch(() => {
      if (bound === checked) bound = undefined;
    });
    return checked;
  };
  return {
    ...source,
    lookupStatement,
    compact: async (bits, hex) => {
      await (bound ?? lookupStatement());
      return source.compact!(bits, hex);
    },
  };
}

function checkBinding(statement: unknown, expected: string, url: string): void {
  const signed = (statement as { ohttp?: { key_config_sha256?: unknown } } | null | undefined)?.ohttp?.key_config_sha256;
  if (signed === undefined)
    throw new OhttpKeyConfigError(`the build statement names no Oblivious HTTP key configuration, so the one at ${url} is not the build's`);
  if (signed !== expected)
    throw new OhttpKeyConfigError(
      `the key configuration at ${url} (SHA-256 ${expected}) is not the one the build signed (${String(signed)})`,
    );
}
