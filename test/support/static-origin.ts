import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join, normalize } from 'node:path';

/** How a test's origin answers one path instead of serving its file. */
export type OriginAnswer = (req: IncomingMessage, res: ServerResponse) => void;

export interface StaticOrigin {
  url: string;
  /** The path of every request, in order. */
  requests: string[];
  /** The path of every request answered 304 Not Modified (with `etags`), in order. */
  notModified: string[];
  /** From now on `path` (e.g. `/manifest.json`) is answered by `answer`; null serves the file again. */
  answer(path: string, answer: OriginAnswer | null): void;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * A plain static http origin over a folder (what nginx or a CDN origin does for a build's folder):
 * 200 with the file, 206 with the range asked for (`Range: bytes=a-b`), 404 without one. `stop()` takes it away and `start()` brings it back on the
 * same port, so a test can see the store fail closed while it is down; `answer()` makes one path
 * hostile (see {@link endlessBody}, {@link drippingBody}) and back. With `etags`, each file has a
 * strong ETag and a matching If-None-Match is answered 304, as object storage and nginx do.
 */
export async function startStaticOrigin(root: string, opts: { etags?: boolean } = {}): Promise<StaticOrigin> {
  let server: Server | null = null;
  let port = 0;
  const requests: string[] = [];
  const notModified: string[] = [];
  const answers = new Map<string, OriginAnswer>();
  const start = () =>
    new Promise<void>((resolve) => {
      const s = createServer(async (req, res) => {
        const path = decodeURIComponent(new URL(req.url ?? '/', 'http://origin').pathname);
        requests.push(path);
        const answer = answers.get(path);
        if (answer) return answer(req, res);
        const file = normalize(join(root, path));
        if (!file.startsWith(root)) return void res.writeHead(400).end();
        const body = await readFile(file).catch(() => null);
        if (!body) return void res.writeHead(404).end();
        const etag = opts.etags ? `"${createHash('sha256').update(body).digest('hex')}"` : undefined;
        if (etag && req.headers['if-none-match'] === etag) {
          notModified.push(path);
          return void res.writeHead(304, { etag }).end();
        }
        sendFile(req, res, body, etag ? { etag } : {});
      });
      server = s;
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      server?.closeAllConnections();
      server?.close(() => resolve());
    });
  await start();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    notModified,
    answer: (path, answer) => (answer ? answers.set(path, answer) : answers.delete(path)),
    stop,
    start,
  };
}

/**
 * Answers with a file's bytes as a static origin does: 206 with the range a `Range: bytes=a-b`
 * header asks for (416 past the end), else 200 with the whole file and `headers`.
 */
export function sendFile(req: IncomingMessage, res: ServerResponse, body: Buffer, headers: Record<string, string> = {}): void {
  const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
  if (!range) return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, ...headers }).end(body);
  const first = Number(range[1]);
  if (first >= body.length) return void res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
  const last = Math.min(Number(range[2]), body.length - 1);
  const part = body.subarray(first, last + 1);
  res.writeHead(206, { 'content-range': `bytes ${first}-${last}/${body.length}`, 'content-length': part.length }).end(part);
}

/**
 * A 200 whose body is `bytes` long (2 GB, say), made lazily from one 64 KiB chunk as the client
 * reads it (never held in memory); with `declare`, its length is sent up front, else it is chunked.
 * `ended` resolves once the client stopped reading (the connection closed) or all was sent;
 * `sent` tells how many bytes of it were written (those the client could have read).
 */
export function endlessBody(bytes: number, declare = false): OriginAnswer & { ended: Promise<void>; sent: () => number } {
  let ended!: () => void;
  let sent = 0;
  const answer = ((_req: IncomingMessage, res: ServerResponse) => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    res.writeHead(200, { 'content-type': 'application/json', ...(declare ? { 'content-length': bytes } : {}) });
    const more = () => {
      while (sent < bytes && !res.destroyed) {
        const part = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
        sent += part.length;
        if (!res.write(part)) return void res.once('drain', more);
      }
      if (!res.destroyed) res.end();
    };
    res.on('close', () => ended());
    more();
  }) as OriginAnswer & { ended: Promise<void>; sent: () => number };
  answer.ended = new Promise<void>((resolve) => (ended = resolve));
  answer.sent = () => sent;
  return answer;
}

/**
 * A 200 whose body never ends: one byte every `everyMs`, so no wait between two chunks is ever
 * long (only a total deadline ends it). `ended` resolves once the client hung up.
 */
export function drippingBody(everyMs = 20): OriginAnswer & { ended: Promise<void> } {
  let ended!: () => void;
  const answer = ((_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{');
    const timer = setInterval(() => res.write(' '), everyMs);
    res.on('close', () => {
      clearInterval(timer);
      ended();
    });
  }) as OriginAnswer & { ended: Promise<void> };
  answer.ended = new Promise<void>((resolve) => (ended = resolve));
  return answer;
}
