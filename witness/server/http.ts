import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { READ_LIMITS } from '#shared';
import { type Answer, addCheckpoint, type Witness } from './add-checkpoint.ts';

/**
 * The `mvr witness` HTTP server, on node:http: `POST /add-checkpoint` (c2sp.org/tlog-witness)
 * and the monitoring `GET /<origin hash>/checkpoint`. The submission and monitoring prefixes are
 * both the server's root.
 */

export interface RunningWitness {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The largest request body taken (the limits table's `requestBody`): 63 proof lines and a checkpoint with its signatures fit many times over. */
const MAX_BODY_BYTES = READ_LIMITS.requestBody.bytes;
const plain = (status: number, body: string): Answer => ({ status, contentType: 'text/plain; charset=utf-8', body: `${body}\n` });

export async function startWitness(witness: Witness, listen: { host: string; port: number }): Promise<RunningWitness> {
  const server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000 }, (req, res) => {
    answer(witness, req)
      .catch(() => plain(500, 'internal error'))
      .then((a) => send(res, a));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }).then(() => witness.state.close()),
  };
}

async function answer(witness: Witness, req: IncomingMessage): Promise<Answer> {
  const path = new URL(req.url ?? '/', 'http://witness').pathname;
  if (path === '/add-checkpoint') {
    if (req.method !== 'POST') return plain(405, 'add-checkpoint takes POST');
    const body = await readBody(req);
    return body === null ? plain(413, `the body is larger than ${MAX_BODY_BYTES} bytes`) : addCheckpoint(witness, body);
  }
  const monitor = /^\/([0-9a-f]{64})\/checkpoint$/.exec(path);
  if (monitor && (req.method === 'GET' || req.method === 'HEAD')) {
    const state = await witness.state.readByHash(monitor[1]!);
    return state
      ? { status: 200, contentType: 'text/plain; charset=utf-8', body: state.checkpoint }
      : plain(404, 'this witness has cosigned no checkpoint of that log');
  }
  return plain(404, 'not found: POST /add-checkpoint, GET /<origin hash>/checkpoint');
}

/** The body as text; null when it is larger than the limit. */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, a: Answer): void {
  if (a.status === 405) res.setHeader('Allow', 'POST');
  res.writeHead(a.status, { 'Content-Type': a.contentType, 'Content-Length': Buffer.byteLength(a.body) });
  res.end(res.req.method === 'HEAD' ? undefined : a.body);
}
