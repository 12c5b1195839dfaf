import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join, normalize } from 'node:path';
import { sendFile } from './static-origin.ts';

/** A request the origin holds: `reached` once it arrived, answered when `release()` is called. */
export interface Held {
  reached: Promise<void>;
  release(): void;
}

/**
 * An http(s) records origin for tests: serves one build's folder as nginx or object storage
 * would, (ranges too), and holds the answer to chosen paths until the test releases it, so a gateway's request
 * stays in flight for exactly as long as a test needs (no timing, no special files).
 */
export async function holdingOrigin(buildDir: string): Promise<{ url: string; hold(path: string): Held; close(): Promise<void> }> {
  const holds = new Map<string, { arrived: () => void; released: Promise<void> } & Held>();
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0]!)).replace(/^\/+/, '');
    const held = holds.get(path);
    held?.arrived();
    void (held?.released ?? Promise.resolve())
      .then(() => readFile(join(buildDir, path)))
      .then(
        (body) => sendFile(req, res, body),
        () => res.writeHead(404).end(),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    hold(path) {
      let arrived!: () => void, release!: () => void;
      const reached = new Promise<void>((r) => (arrived = r));
      const released = new Promise<void>((r) => (release = r));
      const held = { reached, release, arrived, released };
      holds.set(path, held);
      return held;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const h of holds.values()) h.release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
