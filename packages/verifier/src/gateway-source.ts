/**
 * What a merchant-verify gateway serves for one lookup, read over the platform's `fetch` (Node 20+,
 * browsers, Deno, Bun): the answer, its absence proof or log proof, the key set and the log's key.
 * Every read has a size cap and a deadline; past either it fails with FETCH_FAILED, as does any
 * answer that is not the expected one. {@link verifyOnline} (online.ts) asks it in its order.
 */
import { FetchFailedError, KEY_SET_PATH, READ_LIMITS, type ReadKind, readBounded } from '#shared';

/** Where a gateway publishes its log's note verifier key. */
export const LOG_KEY_PATH = '/.well-known/merchant-verify-log.vkey';

/**
 * What {@link verifyOnline} fetches, one function a resource. A caller may supply its own (saved
 * files, an in-process lookup) for any of them; each one absent is simply not fetched.
 */
export interface AnswerSource {
  /** The answer to `GET /v1/verify?domain=` (a record, or the never-audited answer), parsed. */
  answer(domain: string): Promise<unknown>;
  /** The absence proof (`GET /v1/absence?domain=`), parsed; null when the gateway says the domain has a record (HAS_RECORD). */
  absence(domain: string): Promise<unknown | null>;
  /** The record's C2SP tlog-proof (`GET /v1/proof?domain=`); null when the gateway says it is not in the log (NOT_IN_LOG). */
  proof(domain: string): Promise<string | null>;
  /** The key set, parsed; asked again (never from a cache) when what is checked names a key it lacks. */
  keySet(): Promise<unknown>;
  /** The log's note verifier key. */
  logKey(): Promise<string>;
  /** `GET /v1/lookup`: the live build's statement and its log proof, parsed; a private client reads the bucket's bits there first. */
  lookupStatement?(): Promise<unknown>;
  /** The bytes of `GET /v1/lookup/{bits}/{hex}`, a compact answer. */
  compact?(bits: number, hex: string): Promise<Uint8Array>;
  /** The offline bundle (`GET /v1/bundle?domain=`), as its text: what a caller keeps and `verifyBundle` checks. */
  bundle?(domain: string): Promise<string>;
}

export interface GatewaySourceOptions {
  /** The gateway's base URL, e.g. `https://verify.example` (in a page, `location.origin`). */
  baseUrl: string;
  /** The API key for the key-gated routes; sent as `Authorization: Bearer` to `baseUrl` only. */
  apiKey?: string;
  /** The fetch to use (default the global one): a test's, or one with a proxy. */
  fetch?: typeof globalThis.fetch;
  /** Deadline of each request, body included, in ms (default the limits table's for what is asked: 10 s). */
  timeoutMs?: number;
  /** Where the key set is (default `baseUrl` + `/.well-known/merchant-verify-keys.json`). */
  keySetUrl?: string;
  /** Where the log's key is (default `baseUrl` + {@link LOG_KEY_PATH}). */
  logKeyUrl?: string;
  /** A kept build's id: its answer, absence proof and log proof are asked for (`&build=`), not the live build's; verify them with `asOfBuild` set to it. */
  build?: string;
}

/**
 * An {@link AnswerSource} over a gateway's HTTP API.
 *
 * @example
 *   const source = gatewaySource({ baseUrl: 'https://verify.example', apiKey });
 *   const verification = await verifyOnline({ domain: 'shop.example', source, log: true });
 */
export function gatewaySource(options: GatewaySourceOptions): AnswerSource {
  const base = options.baseUrl.replace(/\/+$/, '');
  const get = (url: string, kind: ReadKind, gated: boolean) => read(url, kind, gated ? options.apiKey : undefined, options);
  const build = options.build === undefined ? '' : `&build=${encodeURIComponent(options.build)}`;
  const gated = (route: string, domain: string, kind: ReadKind) =>
    get(`${base}${route}?domain=${encodeURIComponent(domain)}${build}`, kind, true);
  return {
    answer: async (domain) => json(ok(await gated('/v1/verify', domain, 'answer'), 'the answer'), 'the answer'),
    absence: async (domain) => {
      const answer = await gated('/v1/absence', domain, 'absence');
      return answer.problem === 'HAS_RECORD' ? null : json(ok(answer, 'the absence proof'), 'the absence proof');
    },
    proof: async (domain) => {
      const answer = await gated('/v1/proof', domain, 'proof');
      return answer.problem === 'NOT_IN_LOG' ? null : text(ok(answer, 'the log proof'));
    },
    keySet: async () => json(ok(await get(options.keySetUrl ?? `${base}${KEY_SET_PATH}`, 'keySet', false), 'the key set'), 'the key set'),
    logKey: async () => text(ok(await get(options.logKeyUrl ?? `${base}${LOG_KEY_PATH}`, 'logVkey', false), "the log's key")),
    lookupStatement: async () =>
      json(ok(await get(`${base}/v1/lookup`, 'lookupStatement', true), 'the lookup statement'), 'the lookup statement'),
    compact: async (bits, hex) =>
      ok(await get(`${base}/v1/lookup/${bits}/${encodeURIComponent(hex)}`, 'compact', true), 'the compact answer').bytes,
    bundle: async (domain) => {
      const answer = ok(await gated('/v1/bundle', domain, 'bundle'), 'the bundle');
      json(answer, 'the bundle');
      return text(answer);
    },
  };
}

/** One answer: its status, body, and the code of its problem document when it is one. */
interface Answer {
  url: string;
  status: number;
  bytes: Uint8Array;
  problem: string | undefined;
  detail: string | undefined;
}

/**
 * GETs a URL within its kind's limits (the one table), through the one capped reader: a redirect
 * is never followed (an API key stays with the gateway it was given for, and an answer is trusted
 * only from where it was asked), and fails as any other answer that is not 200.
 */
async function read(url: string, kind: ReadKind, apiKey: string | undefined, options: GatewaySourceOptions): Promise<Answer> {
  const { bytes, deadlineMs } = READ_LIMITS[kind];
  const limit = { bytes, deadlineMs: options.timeoutMs ?? deadlineMs };
  const where = new URL(url).origin;
  const answer = await readBounded(url, limit, {
    headers: { accept: 'application/json, text/plain', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if ('failure' in answer) {
    if (answer.failure === 'tooLarge')
      throw new FetchFailedError(`${url} answered more than the ${answer.limitBytes} bytes it may`, answer.status);
    if (answer.failure === 'deadline') throw new FetchFailedError(`no answer from ${where} within ${limit.deadlineMs} ms`);
    throw new FetchFailedError(`cannot reach ${where}: ${(answer.error as Error).message}`);
  }
  if (answer.redirected)
    throw new FetchFailedError(`${where} answered ${answer.status || 'a redirect'} for ${url}, which is not followed`, answer.status);
  const problem = answer.status === 200 ? undefined : problemOf(answer.bytes);
  return { url, status: answer.status, bytes: answer.bytes, problem: problem?.code, detail: problem?.detail };
}

/** The code and detail of a problem document; nothing for a body that is none. */
function problemOf(bytes: Uint8Array): { code: string | undefined; detail: string | undefined } | undefined {
  try {
    const doc = JSON.parse(new TextDecoder().decode(bytes)) as { code?: unknown; detail?: unknown };
    return { code: typeof doc.code === 'string' ? doc.code : undefined, detail: typeof doc.detail === 'string' ? doc.detail : undefined };
  } catch {
    return undefined;
  }
}

/** A 200 answer, or FETCH_FAILED naming the status and the gateway's problem code. */
function ok(answer: Answer, what: string): Answer {
  if (answer.status === 200) return answer;
  const problem = answer.problem ? ` ${answer.problem}` : '';
  const detail = answer.detail ? `: ${answer.detail}` : '';
  throw new FetchFailedError(`the gateway answered ${answer.status}${problem} for ${what}${detail}`, answer.status, answer.problem);
}

const text = (answer: Answer): string => new TextDecoder().decode(answer.bytes);

function json(answer: Answer, what: string): unknown {
  try {
    return JSON.parse(text(answer));
  } catch {
    throw new FetchFailedError(`${what} from ${new URL(answer.url).origin} is not JSON`, answer.status);
  }
}
