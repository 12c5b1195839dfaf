import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { H3Event } from 'h3';
import type { GatewayContext } from '../gateway/context.ts';
import { reply } from '../gateway/http/reply.ts';
import { authorize } from '../gateway/http/authorize.ts';
import { rateLimitFields } from '../gateway/rate-limit.ts';
import { recordFor } from '../gateway/routes/verify.ts';
import { createVerifyMerchantServer, keySetUrlOf } from './verify-merchant-tool.ts';

const MAX_BODY = 64 * 1024;

/**
 * `POST /mcp`: MCP Streamable HTTP, stateless (a server and transport per request, JSON
 * responses, no sessions), behind the same Bearer keys as `/v1/verify`. The tool answers with
 * the very bytes `GET /v1/verify` would serve.
 */
export async function handleMcp(event: H3Event, ctx: GatewayContext): Promise<void> {
  const gate = authorize(event.context, event.node.req.headers.authorization, event.node.req.socket.remoteAddress, ctx);
  if (typeof gate !== 'string') throw gate;
  if (event.context.rateLimit) {
    const fields = rateLimitFields(event.context.rateLimit);
    for (let i = 0; i < fields.length; i += 2) event.node.res.setHeader(fields[i]!, fields[i + 1]!);
  }
  const body = await readJsonBody(event);
  if (body === undefined) return;
  const base = publicBaseUrl(event, ctx);
  const server = createVerifyMerchantServer(async (domain) => (await recordFor(domain, ctx)).bytes, { keySetUrl: keySetUrlOf(base) });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  event.node.res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(event.node.req, event.node.res, body);
}

/** Reads at most 64 KiB of JSON; answers a JSON-RPC error itself and returns undefined when the body is unusable. */
async function readJsonBody(event: H3Event): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of event.node.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) {
      await rpcError(event, 413, -32600, `request body over ${MAX_BODY} bytes`);
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    await rpcError(event, 400, -32700, 'Parse error: the body is not JSON');
    return undefined;
  }
}

async function rpcError(event: H3Event, status: number, code: number, message: string): Promise<void> {
  await reply(event, status, { 'content-type': 'application/json', 'cache-control': 'no-store' }, JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The gateway's public base URL: the issuer's https origin, or the Host the request came to for local use. */
function publicBaseUrl(event: H3Event, ctx: GatewayContext): string {
  const host = event.node.req.headers.host;
  if (host && /^(localhost|127\.[\d.]+|\[::1\])(:\d+)?$/.test(host)) return `http://${host}`;
  return `https://${ctx.issuer}`;
}
