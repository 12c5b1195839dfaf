import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OHTTP_GATEWAY_PATH } from '../../core/ohttp.ts';

/** One request as the relay saw it: who sent it, its headers and its body. */
export interface RelaySaw {
  from: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface OhttpRelay {
  /** Where clients send `message/ohttp-req` POSTs. */
  url: string;
  /** The address the relay's own requests to the gateway come from (not the callers'). */
  outboundAddress: string;
  /** Every request it relayed, in order. */
  saw: RelaySaw[];
  close(): Promise<void>;
}

/**
 * A third party's Oblivious HTTP relay (RFC 9458 section 6.3), as small as one can be: every
 * POST is forwarded, body and Content-Type only, to one gateway's resource; the gateway's status,
 * Content-Type and body go back. Nothing of the caller (its address, its other headers) is
 * forwarded. Its requests to the gateway leave from `outboundAddress` (another loopback address),
 * so a test can tell the relay's connections from a caller's.
 */
export async function startOhttpRelay(gatewayUrl: string, outboundAddress = '127.0.0.2'): Promise<OhttpRelay> {
  const saw: RelaySaw[] = [];
  const target = new URL(OHTTP_GATEWAY_PATH, gatewayUrl);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      saw.push({ from: req.socket.remoteAddress, headers: { ...req.headers }, body });
      const forward = request(
        target,
        {
          method: 'POST',
          localAddress: outboundAddress,
          headers: { 'content-type': req.headers['content-type'] ?? '', 'content-length': body.length },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'application/octet-stream' });
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.writeHead(502).end());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/relay`,
    outboundAddress,
    saw,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
