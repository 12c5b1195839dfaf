/**
 * What the request-smuggling suites of the front door share: the raw request pieces, and the
 * requests the gateway logged (to tell what reached it).
 */
import type { LogLine } from '../../../gateway/context.ts';
import type { TestGateway } from '../gateway.ts';
import { poll } from '../wait.ts';

export const KNOWN = 'acme-outdoor.example';
export const H = 'Host: 127.0.0.1\r\n';
export const SMUGGLED = `GET /smuggled HTTP/1.1\r\n${H}\r\n`;

export const requestLogsOf = (g: TestGateway): LogLine[] => g.logs.filter((l) => l.msg === 'request');

/** Every request the gateway logged after `from` (once `count` are there, or after a short wait). */
export async function loggedSinceOf(g: TestGateway, from: number, count: number): Promise<LogLine[]> {
  await poll(
    async () => requestLogsOf(g).slice(from),
    (lines) => lines.length >= count,
    { timeoutMs: count === 0 ? 0 : 2000 },
  );
  if (count === 0) await new Promise((r) => setTimeout(r, 50));
  return requestLogsOf(g).slice(from);
}
