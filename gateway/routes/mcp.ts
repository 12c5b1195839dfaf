import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { defineEventHandler, type H3Event, sendWebResponse, setResponseHeaders } from 'h3';
import { LOG_CHECKPOINT } from '../../core/layout.ts';
import { createMcpServer, keySetUrlOf, quotaCost } from '../../mcp/server.ts';
import type { WitnessSource } from '../../mcp/witnessed.ts';
import { bundleFor } from '../../service/bundles.ts';
import { sendAnswer } from '../answer.ts';
import { authenticate, chargeQuota } from '../auth.ts';
import { readBody } from '../body.ts';
import { cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { noteWithheld } from '../problem.ts';

/**
 * `POST /mcp`: MCP over HTTP, stateless, behind the same Bearer keys and quotas as `/v1/verify`
 * (`verify_merchants` costs one unit a domain, as the batch endpoint does).
 * Requests of the newest protocol revision go to the official server SDK's handler; requests of
 * the 2025 revisions (SDK 1.x clients, a plain `curl`) get stateless Streamable HTTP with JSON
 * answers, as the SDK's documentation composes the two. Either way the tool answers through the
 * same records service, so its text is the very bytes `GET /v1/verify` serves.
 */
export function mcpRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    const keyId = await authenticate(event, services);
    const body = await readJsonBody(event);
    if (body === undefined) return;
    await chargeQuota(event, services, keyId, quotaCost(body));
    const keySetUrl = keySetUrlOf(publicBaseUrl(event, services.issuer));
    const history = (domain: string) => services.history.history(domain);
    const proof = (domain: string) => services.proofs.proofFor(domain);
    const server = () =>
      createMcpServer(async (domain) => (await services.records.recordFor(domain)).bytes, {
        keySetUrl,
        issuer: services.issuer,
        history,
        proof,
        absence: (domain) => services.proofs.absenceFor(domain),
        bundle: (domain) => bundleFor(services.records, services.proofs, domain),
        // In-process: the tool call names the domain, so a private lookup here hides nothing from the gateway (the tool says so).
        compact: async (bits, hex) => (await services.compact.answer(String(bits), hex)).bytes,
        lookupStatement: async () => JSON.parse((await services.compact.head()).bytes.toString('utf8')),
        remote: false,
        // The key set and log key the gateway serves its answers under (and publishes).
        keySet: async () => services.records.checkKeys().keySet,
        vkey: async () => (await services.proofs.vkey())?.toString('utf8') ?? null,
        witness: witnessSource(services),
        noteWithheld: (error, domain) => noteWithheld(event, services, error, domain),
      });
    // The body was read (and bounded) above; the SDK is given it parsed, with the request's headers.
    const request = new Request(new URL(event.node.req.originalUrl ?? '/mcp', 'http://gateway.invalid'), {
      method: 'POST',
      headers: event.headers,
    });
    const response = (await isLegacyRequest(request, body))
      ? await answerLegacy(server(), request, body)
      : await answerModern(server, request, body, services);
    // The SDK's answer keeps headers set before it, unless it sets its own.
    setResponseHeaders(event, cacheHeaders('/mcp'));
    await sendWebResponse(event, response);
  });
}

/** With a witness policy, what the tools check it on: the log's live checkpoint and key, at the gateway's clock. */
function witnessSource(services: GatewayServices): WitnessSource | undefined {
  if (!services.witnessPolicy) return undefined;
  const text = async (bytes: Promise<Buffer | null>) => (await bytes)?.toString('utf8') ?? null;
  return {
    policy: services.witnessPolicy.policy,
    checkpoint: () => text(services.proofs.file(LOG_CHECKPOINT)),
    vkey: () => text(services.proofs.vkey()),
    now: services.now,
  };
}

/** The newest revision: the SDK's handler, made for this one request. */
async function answerModern(
  server: () => ReturnType<typeof createMcpServer>,
  request: Request,
  body: unknown,
  services: GatewayServices,
): Promise<Response> {
  const handler = createMcpHandler(server, {
    legacy: 'reject',
    // The SDK reports a caller's malformed request here as well as its own failures: a warning, not an error.
    onerror: (error) => services.log({ level: 'warn', msg: 'mcp request not served', error: error.message }),
  });
  try {
    return await handler.fetch(request, { parsedBody: body });
  } finally {
    await handler.close();
  }
}

/** A 2025-revision request: a server and a stateless transport for it, answering with JSON. */
async function answerLegacy(server: ReturnType<typeof createMcpServer>, request: Request, body: unknown): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    await transport.close();
    await server.close();
  }
}

/** Reads the body (413 over 64 KiB); answers a JSON-RPC parse error itself and returns undefined when it is not JSON. */
async function readJsonBody(event: H3Event): Promise<unknown> {
  const body = await readBody(event);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    rpcError(event, 400, -32700, 'Parse error: the body is not JSON');
    return undefined;
  }
}

function rpcError(event: H3Event, status: number, code: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  sendAnswer(event, { status, headers: { 'content-type': 'application/json', ...cacheHeaders('/mcp') }, body });
}

/** The gateway's public base URL: the issuer's https origin, or the Host the request came to for local use. */
function publicBaseUrl(event: H3Event, issuer: string): string {
  const host = event.node.req.headers.host;
  if (host && /^(localhost|127\.[\d.]+|\[::1\])(:\d+)?$/.test(host)) return `http://${host}`;
  return `https://${issuer}`;
}
