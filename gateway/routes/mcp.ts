import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { defineEventHandler, type H3Event } from 'h3';
import { PayloadTooLargeError } from '../../core/errors.ts';
import { createMcpServer, keySetUrlOf } from '../../mcp/server.ts';
import { sendAnswer } from '../answer.ts';
import { requireApiKey } from '../auth.ts';
import type { GatewayServices } from '../context.ts';

const MAX_BODY = 64 * 1024;

/**
 * `POST /mcp`: MCP Streamable HTTP, stateless (a server and transport per request, JSON
 * responses, no sessions), behind the same Bearer keys and quotas as `/v1/verify`. The tool
 * answers through the same records service, so its text is the very bytes `GET /v1/verify` serves.
 */
export function mcpRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    requireApiKey(event, services);
    const body = await readJsonBody(event);
    if (body === undefined) return;
    const server = createMcpServer(async (domain) => (await services.records.recordFor(domain)).bytes, { keySetUrl: keySetUrlOf(publicBaseUrl(event, services.issuer)) });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    event.node.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(event.node.req, event.node.res, body);
  });
}

/** Reads at most 64 KiB (else 413 PAYLOAD_TOO_LARGE) of JSON; answers a JSON-RPC parse error itself and returns undefined when it is not JSON. */
async function readJsonBody(event: H3Event): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of event.node.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new PayloadTooLargeError(`the request body is over ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    await rpcError(event, 400, -32700, 'Parse error: the body is not JSON');
    return undefined;
  }
}

function rpcError(event: H3Event, status: number, code: number, message: string): Promise<void> {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  return sendAnswer(event, { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body });
}

/** The gateway's public base URL: the issuer's https origin, or the Host the request came to for local use. */
function publicBaseUrl(event: H3Event, issuer: string): string {
  const host = event.node.req.headers.host;
  if (host && /^(localhost|127\.[\d.]+|\[::1\])(:\d+)?$/.test(host)) return `http://${host}`;
  return `https://${issuer}`;
}
