/**
 * Slow clients (slowloris), registered into front-door.test.ts: connections that send their
 * request head a byte at a time, or nothing at all, must not keep other clients from being
 * served, and must not be held open for ever.
 *
 * Two gateways. The front door's own has connection timeouts far above the file's run time: the
 * slow clients opened when it starts hold their connections while every other suite runs, so
 * "others are served meanwhile, the slow ones get nothing" is certain, not a race. A second
 * gateway has the same limits shortened (`connectionTimeouts`, a gateway setting), so the
 * closing is seen in about a second instead of waiting out the 10 s default: node:http checks
 * the head timeout every `connectionsCheckingInterval`, and the gateway sets it short, or a slow
 * client would be closed only at Node's 30 s check.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionTimeouts } from '../../../gateway/context.ts';
import { connectionTimeouts, DEFAULT_CONNECTION_TIMEOUTS } from '../../../gateway/server.ts';
import { startTestGateway, type TestGateway } from '../gateway.ts';
import { thrown } from '../thrown.ts';
import type { FrontDoor } from './checks.ts';

const KNOWN = 'acme-outdoor.example';
/** The front door's timeouts: longer than the whole file may take on a loaded machine. */
export const FRONT_DOOR_TIMEOUTS: Partial<ConnectionTimeouts> = { headersMs: 300_000, requestMs: 300_000 };
/** The short gateway's timeouts. */
const SHORT: ConnectionTimeouts = {
  headersMs: 600,
  requestMs: 1_200,
  keepAliveMs: 300,
  writeIdleMs: DEFAULT_CONNECTION_TIMEOUTS.writeIdleMs,
};
/** How long the test waits for a close it expects (an upper bound, not a sleep: it ends at the close). */
const CLOSE_BOUND_MS = 5_000;

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

interface KeepAliveClient {
  answeredAt: number | null;
  closedAt: number | null;
  received: string;
  closed: Promise<void>;
}

/** A client of `g` that writes `head` one byte every `everyMs`, or all at once (null). */
function slowClient(g: TestGateway, into: SlowClient[], name: string, head: string, everyMs: number | null): SlowClient {
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
  into.push(c);
  return c;
}

/** Ten trickling heads (never finished in the test's time), a silent connection and a head without its empty line. */
function openSlowClients(g: TestGateway, everyMs: number): SlowClient[] {
  const out: SlowClient[] = [];
  const head = `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${g.key}\r\nX-Slow: ${'s'.repeat(150)}\r\n\r\n`;
  for (let i = 0; i < 10; i++) slowClient(g, out, `trickle-${i}`, head, everyMs);
  slowClient(g, out, 'silent', '', null);
  slowClient(g, out, 'half-head', 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n', null);
  return out;
}

/** A keep-alive connection left idle after one answered request. */
function idleKeepAlive(g: TestGateway): KeepAliveClient {
  const socket = connect(g.gateway.port, '127.0.0.1');
  const ka: KeepAliveClient = { answeredAt: null, closedAt: null, received: '', closed: Promise.resolve() };
  ka.closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      ka.closedAt = performance.now();
      resolve();
    }),
  );
  socket.on('error', () => undefined);
  socket.on('data', (d: Buffer) => {
    ka.received += d.toString('latin1');
    ka.answeredAt ??= performance.now();
  });
  socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  return ka;
}

/** Waits for `p` at most `ms`; true if it settled. */
async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const result = await Promise.race([p.then(() => true as const), timeout]);
  clearTimeout(timer);
  return result;
}

let held: SlowClient[] = [];

/** Opens slow clients on the front door's gateway; call right after it started, so they are held during every suite. */
export function startSlowClients(fd: FrontDoor): void {
  held = openSlowClients(fd.g, 500);
}

/** Closes whatever the slow clients still hold (afterAll). */
export function stopSlowClients(): void {
  for (const c of held) c.socket.destroy();
}

/** The assertions on the slow clients (register last: the first one checks they were held all along). */
export function slowClientSuite(get: () => FrontDoor): void {
  describe('slow clients', () => {
    it('other clients are served normally while a dozen slow clients hold connections, which get nothing', async () => {
      const { g } = get();
      for (let i = 0; i < 10; i++) {
        const r = await g.verify(KNOWN);
        expect(r.status).toBe(200);
        expect(r.json.domain).toBe(KNOWN);
      }
      expect(held.length).toBe(12);
      for (const c of held) {
        expect(c.closedAt, c.name).toBeNull();
        expect(c.received, c.name).toBe('');
        if (c.name.startsWith('trickle')) expect(c.sent, c.name).toBeGreaterThan(0);
      }
    });

    it('the timeouts default to 10 s for the head, 30 s for the request, 5 s idle and 30 s for a write, and bad ones are refused at start', () => {
      expect(DEFAULT_CONNECTION_TIMEOUTS).toEqual({ headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000, writeIdleMs: 30_000 });
      expect(connectionTimeouts({ headersMs: 600 })).toEqual({
        headersMs: 600,
        requestMs: 30_000,
        keepAliveMs: 5_000,
        writeIdleMs: 30_000,
      });
      expect(thrown(() => connectionTimeouts({ writeIdleMs: 0 }))).toMatchObject({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('writeIdleMs'),
      });
      expect(thrown(() => connectionTimeouts({ keepAliveMs: 0 }))).toMatchObject({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('keepAliveMs'),
      });
      expect(thrown(() => connectionTimeouts({ headersMs: 1.5 }))).toMatchObject({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('headersMs'),
      });
      expect(thrown(() => connectionTimeouts({ headersMs: 2_000, requestMs: 1_000 }))).toMatchObject({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('requestMs'),
      });
    });

    describe(`with the timeouts shortened (head ${SHORT.headersMs} ms, idle ${SHORT.keepAliveMs} ms)`, () => {
      let g: TestGateway;
      let slow: SlowClient[];
      let keepAlive: KeepAliveClient;
      beforeAll(async () => {
        g = await startTestGateway(get().g.project, { connectionTimeouts: SHORT });
        slow = openSlowClients(g, 100);
        keepAlive = idleKeepAlive(g);
      });
      afterAll(async () => {
        for (const c of slow ?? []) c.socket.destroy();
        await g?.close();
      });

      it('an idle keep-alive connection is closed after keepAliveMs, not before', async () => {
        expect(await settledWithin(keepAlive.closed, CLOSE_BOUND_MS)).toBe(true);
        expect(keepAlive.received).toMatch(/^HTTP\/1\.1 200 /);
        expect(keepAlive.closedAt! - keepAlive.answeredAt!).toBeGreaterThanOrEqual(SHORT.keepAliveMs - 20);
      });

      it('closes every slow client with 408 once headersMs has passed (not before), and goes on serving', async () => {
        const all = await settledWithin(Promise.all(slow.map((c) => c.closed)), CLOSE_BOUND_MS);
        expect(
          slow.filter((c) => c.closedAt === null).map((c) => c.name),
          'still open',
        ).toEqual([]);
        expect(all).toBe(true);
        for (const c of slow) {
          expect(c.received, c.name).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
          expect(c.received, c.name).toMatch(/\r\nConnection: close\r\n/i);
          // Never a record: the head was never completed.
          expect(c.received, c.name).not.toContain(KNOWN);
          if (c.name.startsWith('trickle')) expect(c.sent, c.name).toBeGreaterThan(2);
          expect(c.closedAt! - c.startedAt, c.name).toBeGreaterThanOrEqual(SHORT.headersMs - 20);
        }
        const r = await g.verify(KNOWN);
        expect(r.status).toBe(200);
      });
    });
  });
}
