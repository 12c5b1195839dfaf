import { createServer, request } from 'node:http';

/** One request the proxy forwarded: its request line (`GET /v1/lookup/3f HTTP/1.1`), its body as text, and the status it got. */
export interface Recorded {
  line: string;
  body: string;
  /** null until the target answered. */
  status: number | null;
}

export interface RecordingProxy {
  /** The proxy's base URL: point a client here instead of at the target. */
  url: string;
  /** Every request forwarded, in the order they arrived. */
  requests: Recorded[];
  close(): Promise<void>;
}

/**
 * A forwarding HTTP proxy in front of a test's gateway that records what a client sent: each
 * request line and body, as anyone on the path (a CDN, a proxy, the operator's load balancer)
 * would see them. Answers go back as the target gave them, headers and all.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const recorded: Recorded = { line: `${req.method} ${req.url} HTTP/${req.httpVersion}`, body: body.toString('utf8'), status: null };
      requests.push(recorded);
      const headers = { ...req.headers, host: new URL(target).host };
      const forwarded = request(new URL(req.url ?? '/', target), { method: req.method, headers }, (answer) => {
        recorded.status = answer.statusCode ?? null;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      forwarded.on('error', () => res.writeHead(502).end());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
