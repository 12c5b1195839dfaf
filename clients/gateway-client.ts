import { READ_LIMITS } from '../core/limits.ts';
import { boundedGet } from './bounded-get.ts';

/** A gateway's answer to a key-gated `GET`: the body's bytes, or the status and problem document. */
export type GatewayAnswer = { ok: true; bytes: Buffer } | { ok: false; status: number; code: string | null; detail: string };

/**
 * Any key-gated `GET` of a gateway (`path` with its query) with an API key, for what is not verified
 * (`mvr mcp --base-url`'s history); a verification fetches through the verifier package's online
 * client. Throws FETCH_FAILED only when the gateway cannot be reached, answers more than an answer
 * may have, or redirects (never followed: the key goes only where it was sent); an error answer is
 * returned, so that the caller can report it in its own terms.
 */
export async function getFromGateway(baseUrl: string, apiKey: string, path: string, timeoutMs = 10_000): Promise<GatewayAnswer> {
  const url = `${baseUrl.replace(/\/+$/, '')}${path}`;
  const res = await boundedGet(url, {
    limit: READ_LIMITS.gatewayAnswer,
    timeoutMs,
    headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
  });
  const bytes = res.body;
  if (res.statusCode === 200) return { ok: true, bytes };
  try {
    const problem = JSON.parse(bytes.toString('utf8')) as { code?: unknown; detail?: unknown };
    return {
      ok: false,
      status: res.statusCode,
      code: typeof problem.code === 'string' ? problem.code : null,
      detail: String(problem.detail ?? ''),
    };
  } catch {
    return { ok: false, status: res.statusCode, code: null, detail: bytes.toString('utf8').slice(0, 200) };
  }
}
