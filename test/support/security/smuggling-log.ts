/**
 * What the request-smuggling suites of the front door share: the raw request pieces, and the
 * requests the gateway logged (to tell what reached it).
 */
import type { LogLine } from '../../../gateway/context.ts';
import { type TestGateway, waitForLog } from '../gateway.ts';
import { poll } from '../wait.ts';

export const KNOWN = 'acme-outdoor.example';
export const H = 'Host: 127.0.0.1\r\n';
export const SMUGGLED = `GET /smuggled HTTP/1.1\r\n${H}\r\n`;

export const requestLogsOf = (g: TestGateway): LogLine[] => g.logs.filter((l) => l.msg === 'request');

let markers = 0;
const MARKER = '/end-of-smuggling-check-';

/**
 * The requests the gateway logged from index `from` on: once `count` are there, a marker request
 * is sent and its line awaited. Answers are logged in the order they finish, so every request
 * answered before the marker is in by then, and one more than expected is seen, not missed.
 */
export async function loggedSinceOf(g: TestGateway, from: number, count: number): Promise<LogLine[]> {
  await poll(
    async () => requestLogsOf(g).slice(from),
    (lines) => lines.length >= count,
    { timeoutMs: 20_000 },
  );
  const marker = await markLog(g);
  return requestLogsOf(g)
    .slice(from, marker)
    .filter((l) => !String(l.path).startsWith(MARKER));
}

/** Sends a marker request and waits for its line: returns its index among the request lines, all earlier answers logged. */
export async function markLog(g: TestGateway): Promise<number> {
  const path = `${MARKER}${++markers}`;
  await g.request(path, { key: null });
  const line = await waitForLog(g, (l) => l.msg === 'request' && l.path === path);
  return requestLogsOf(g).indexOf(line);
}
