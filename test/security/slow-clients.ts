/**
 * Slow clients (slowloris), registered into front-door.test.ts: connections that send their
 * request head one byte every 500 ms, or nothing at all, must not be held open for ever, and
 * must not keep other clients from being served. They are started when the gateway starts, so
 * every other suite of the file runs while they hold connections; the assertions that wait for
 * them come last.
 *
 * node:http enforces headersTimeout from a timer that runs every `connectionsCheckingInterval`;
 * the gateway creates its server with a short one (gateway/server.ts), so the head must arrive
 * within 10 s, or node:http answers 408 and closes the connection. keepAliveTimeout (5 s) is a
 * socket timer.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { sleep, type TestGateway } from '../gateway/helpers.ts';
import type { FrontDoor } from './checks.ts';

const KNOWN = 'acme-outdoor.example';
const HEADERS_TIMEOUT_MS = 10_000;
const SLACK_MS = 5_000;
/** Node's default connectionsCheckingInterval: the bound the test allows, far above the gateway's. */
const NODE_CHECK_INTERVAL_MS = 30_000;

interface SlowClient {
  name: string;
  socket: Socket;
  startedAt: number;
  /** Bytes of the request head written so far. */
  sent: number;
  received: string;
  closedAt: number | null;
  closed: Promise<void>;
}

const slow: SlowClient[] = [];
let keepAlive: { answeredAt: number | null; closedAt: number | null; received: string; closed: Promise<void> };

/** A client that writes `head` one byte every `everyMs` (never finishing in the test's time). */
function slowClient(name: string, head: string, everyMs: number | null): SlowClient {
  const socket = connect(g.gateway.port, '127.0.0.1');
  const c: SlowClient = { name, socket, startedAt: performance.now(), sent: 0, received: '', closedAt: null, closed: Promise.resolve() };
  let timer: NodeJS.Timeout | null = null;
  c.closed = new Promise<void>((resolve) => {
    socket.on('close', () => {
      c.closedAt = performance.now();
      if (timer) clearInterval(timer);
      resolve();
    });
  });
  socket.on('error', () => undefined);
  socket.on('data', (d: Buffer) => (c.received += d.toString('latin1')));
  if (everyMs !== null) {
    timer = setInterval(() => {
      if (c.sent < head.length && !socket.destroyed) socket.write(head[c.sent++]!);
    }, everyMs);
  } else {
    socket.write(head);
    c.sent = head.length;
  }
  slow.push(c);
  return c;
}

/** Waits for `p` at most until `deadline` (performance.now() time); true if it settled. */
async function settledBy(p: Promise<unknown>, deadline: number): Promise<boolean> {
  const remaining = Math.max(0, deadline - performance.now());
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), remaining)));
  const result = await Promise.race([p.then(() => true as const), timeout]);
  clearTimeout(timer);
  return result;
}

let g: TestGateway;
let slowStartedAt = 0;
/** Which slow clients were still open at headersTimeout + slack after they started (taken by a timer, whenever the test runs). */
let openAtDeadline: Promise<string[]>;

/** Opens the slow clients and the idle keep-alive connection; call right after the gateway started. */
export function startSlowClients(fd: FrontDoor): void {
  g = fd.g;
  slowStartedAt = performance.now();
  openAtDeadline = new Promise((resolve) => {
    setTimeout(() => resolve(slow.filter((c) => c.closedAt === null).map((c) => c.name)), HEADERS_TIMEOUT_MS + SLACK_MS).unref();
  });
  // A head that would take 2 minutes at one byte per 500 ms.
  const head = `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${g.key}\r\nX-Slow: ${'s'.repeat(150)}\r\n\r\n`;
  for (let i = 0; i < 10; i++) slowClient(`trickle-${i}`, head, 500);
  slowClient('silent', '', null); // connects and sends nothing
  slowClient('half-head', 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n', null); // never sends the empty line

  // An idle keep-alive connection after one answered request: keepAliveTimeout (5 s) applies.
  const socket = connect(g.gateway.port, '127.0.0.1');
  const ka = { answeredAt: null as number | null, closedAt: null as number | null, received: '', closed: Promise.resolve() };
  ka.closed = new Promise<void>((resolve) => socket.on('close', () => ((ka.closedAt = performance.now()), resolve())));
  socket.on('error', () => undefined);
  socket.on('data', (d: Buffer) => {
    ka.received += d.toString('latin1');
    ka.answeredAt ??= performance.now();
  });
  socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  keepAlive = ka;
}

/** Closes whatever the slow clients still hold (afterAll). */
export function stopSlowClients(): void {
  for (const c of slow) c.socket.destroy();
}

/** The assertions on the slow clients: register last, they wait for the head timeout. */
export function slowClientSuite(_get: () => FrontDoor): void {
  describe('slow clients', () => {
    it('other clients are served normally while a dozen slow clients hold connections', async () => {
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        const r = await g.verify(KNOWN);
        expect(r.status).toBe(200);
        expect(r.json.domain).toBe(KNOWN);
        expect(performance.now() - started).toBeLessThan(2000);
        await sleep(150);
      }
      // Meanwhile the slow clients were still open and got nothing (their heads are incomplete).
      if (performance.now() - slowStartedAt < HEADERS_TIMEOUT_MS - 2_000) {
        for (const c of slow) {
          expect(c.closedAt, c.name).toBeNull();
          expect(c.received, c.name).toBe('');
        }
      }
    });

    it('an idle keep-alive connection is closed after keepAliveTimeout (5 s)', async () => {
      const closed = await settledBy(keepAlive.closed, performance.now() + 8_000);
      expect(keepAlive.received).toMatch(/^HTTP\/1\.1 200 /);
      expect(closed).toBe(true);
      const idleMs = keepAlive.closedAt! - keepAlive.answeredAt!;
      expect(idleMs).toBeGreaterThan(4_000);
      expect(idleMs).toBeLessThan(7_000);
    });

    it(`closes every slow client within headersTimeout (${HEADERS_TIMEOUT_MS / 1000} s) + ${SLACK_MS / 1000} s`, async () => {
      expect(slow.length).toBe(12);
      expect(await openAtDeadline, 'still open at headersTimeout + 5 s').toEqual([]);
    });

    it('closes every slow client eventually, with 408, well before requestTimeout + the check interval', async () => {
      const started = Math.min(...slow.map((c) => c.startedAt));
      // Bounded: at most one check interval plus slack after the start.
      const all = await settledBy(Promise.all(slow.map((c) => c.closed)), started + NODE_CHECK_INTERVAL_MS + 2 * SLACK_MS);
      expect(slow.filter((c) => c.closedAt === null).map((c) => c.name), 'still open').toEqual([]);
      expect(all).toBe(true);
      for (const c of slow) {
        expect(c.received, c.name).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
        expect(c.received, c.name).toMatch(/\r\nConnection: close\r\n/i);
        // Never a record: the head was never completed.
        expect(c.received, c.name).not.toContain(KNOWN);
        if (c.name.startsWith('trickle')) expect(c.sent, c.name).toBeGreaterThan(10);
      }
      const closedAfter = slow.map((c) => Math.round((c.closedAt! - c.startedAt) / 1000));
      // Not before headersTimeout.
      expect(Math.min(...closedAfter)).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS / 1000 - 1);
      console.info(`slow clients closed after ${Math.min(...closedAfter)}-${Math.max(...closedAfter)} s (headersTimeout ${HEADERS_TIMEOUT_MS / 1000} s)`);
      // And the gateway still serves.
      const r = await g.verify(KNOWN);
      expect(r.status).toBe(200);
    });
  });
}
