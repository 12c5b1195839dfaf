import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join, normalize } from 'node:path';

/**
 * A plain static http origin over a folder (what nginx or a CDN origin does for a build's folder):
 * 200 with the file, 404 without one. `stop()` takes it away and `start()` brings it back on the
 * same port, so a test can see the store fail closed while it is down.
 */
export async function startStaticOrigin(root: string): Promise<{ url: string; stop(): Promise<void>; start(): Promise<void> }> {
  let server: Server | null = null;
  let port = 0;
  const start = () =>
    new Promise<void>((resolve) => {
      const s = createServer(async (req, res) => {
        const file = normalize(join(root, decodeURIComponent(new URL(req.url ?? '/', 'http://origin').pathname)));
        if (!file.startsWith(root)) return void res.writeHead(400).end();
        const body = await readFile(file).catch(() => null);
        if (!body) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
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
  return { url: `http://127.0.0.1:${port}`, stop, start };
}
