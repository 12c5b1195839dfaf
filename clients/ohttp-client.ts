import { type AnswerSource, gatewaySource } from '@merchant-verify/verifier';
import { BHttpDecoder, BHttpEncoder } from 'bhttp-js';
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
 * The verifier package's gateway source with every request through `relayUrl`, and the live
 * statement (`GET /v1/lookup`, fetched before any bucket) and each prefix answer's build statement
 * held to the key configuration: a statement that does not name the
 * SHA-256 of `keyConfig` (`ohttp.key_config_sha256`) refuses the answer with
 * OHTTP_KEY_CONFIG_INVALID, so a gateway that gave this client a key of its own (to tell its
 * requests apart) is caught at its first answer. The statement is the one the verifier then
 * checks the signature of: a gateway cannot write the hash into it.
 */
export function ohttpSource(options: { baseUrl: string; apiKey: string; relayUrl: string; keyConfig: FetchedKeyConfig }): AnswerSource {
  const source = gatewaySource({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    fetch: ohttpFetch(options.relayUrl, options.keyConfig.bytes),
  });
  const expected = keyConfigSha256(options.keyConfig.bytes);
  return {
    ...source,
    prefix: async (prefix) => {
      const answer = await source.prefix!(prefix);
      if (answer !== null) checkBinding(answer, expected, options.keyConfig.url);
      return answer;
    },
    // The live statement comes before any bucket is sent, so a key of this client's own is caught before a bucket is sealed to it.
    lookupStatement: async () => {
      const head = await source.lookupStatement!();
      checkBinding(head, expected, options.keyConfig.url);
      return head;
    },
  };
}

function checkBinding(answer: unknown, expected: string, url: string): void {
  const statement = (answer as { statement?: { ohttp?: { key_config_sha256?: unknown } } } | null)?.statement;
  const signed = statement?.ohttp?.key_config_sha256;
  if (signed === undefined)
    throw new OhttpKeyConfigError(`the build statement names no Oblivious HTTP key configuration, so the one at ${url} is not the build's`);
  if (signed !== expected)
    throw new OhttpKeyConfigError(
      `the key configuration at ${url} (SHA-256 ${expected}) is not the one the build signed (${String(signed)})`,
    );
}
