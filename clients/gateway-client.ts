import { FetchFailedError } from './key-set-client.ts';

/** A gateway's answer to a key-gated `GET`: the body's bytes, or the status and problem document. */
export type GatewayAnswer = { ok: true; bytes: Buffer } | { ok: false; status: number; code: string | null; detail: string };

/**
 * Any key-gated `GET` of a gateway (`path` with its query) with an API key, for what is not verified
 * (`mvr mcp --base-url`'s history); a verification fetches through the verifier package's online
 * client. Throws {@link FetchFailedError} only when the gateway cannot be reached; an error answer
 * is returned, so that the caller can report it in its own terms.
 */
export async function getFromGateway(baseUrl: string, apiKey: string, path: string, timeoutMs = 10_000): Promise<GatewayAnswer> {
  const url = `${baseUrl.replace(/\/+$/, '')}${path}`;
  // undici is loaded on the first request, not with the CLI: `mvr verify --file` never fetches.
  const { request } = await import('undici');
  let res;
  try {
    res = await request(url, {
      headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch (error) {
    throw new FetchFailedError(`cannot reach ${new URL(url).origin}: ${(error as Error).message}`);
  }
  const bytes = Buffer.from(await res.body.arrayBuffer());
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
