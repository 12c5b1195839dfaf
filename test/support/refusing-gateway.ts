import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A gateway in front of a real one that refuses every prefix lookup, and what reached it. */
export interface RefusingGateway {
  url: string;
  /** The path of every request, in order. */
  paths: string[];
  /** The most bits of a domain hash any prefix lookup named (4 a hex digit; the bits a compact lookup says). */
  bitsReached(): number;
  stop(): Promise<void>;
}

/**
 * A stub gateway that wants to know: it answers every `GET /v1/lookup/{...}` with a 400
 * INVALID_PREFIX problem, and passes every other request (the statement at `/v1/lookup`, the key
 * set, the log's key) through to `upstream`, the real gateway, unchanged. A client that lengthens
 * its prefix after a refusal shows it in {@link RefusingGateway.bitsReached}.
 */
export async function startRefusingGateway(upstream: string): Promise<RefusingGateway> {
  const paths: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const path = req.url ?? '/';
    paths.push(path);
    if (path.startsWith('/v1/lookup/')) {
      res.writeHead(400, { 'content-type': 'application/problem+json' });
      res.end(
        JSON.stringify({ type: 'about:blank', title: 'Invalid prefix', status: 400, code: 'INVALID_PREFIX', detail: 'try a longer one' }),
      );
      return;
    }
    const headers: Record<string, string> = {};
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    const answer = await fetch(`${upstream}${path}`, { headers });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/octet-stream' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const bitsOf = (path: string): number => {
    const rest = path.slice('/v1/lookup/'.length).split('/');
    return rest.length === 2 ? Number(rest[0]) : rest[0]!.length * 4;
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    bitsReached: () => Math.max(0, ...paths.filter((p) => p.startsWith('/v1/lookup/')).map(bitsOf)),
    stop: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
