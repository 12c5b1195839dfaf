/**
 * The fast lane (gateway/http/fast-lane.ts): the record endpoint's common request answered on the
 * socket, everything else handed to node:http. Two real gateways over one build, one with the
 * lane and one without, get the same raw requests: the answers must be the same bytes (but for
 * the Date header and what moves with the clock), and the lane must have answered exactly the
 * requests that are its own. Then what the lane does with a connection: pipelining, handing over
 * mid-connection, a head split across reads, the client's end, keep-alive, shutdown.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../gateway/api-keys.ts';
import { addApiKey, cleanup, makeProject, sleep, startTestGateway, waitForLog, type TestGateway } from './helpers.ts';
import { exchange, header, parseOne, type RawResponse } from '../security/raw-http.ts';

const KNOWN = 'acme-outdoor.example';
const OTHER = 'gadget-hub.example';
const H = 'Host: 127.0.0.1\r\n';

let lane: TestGateway;
let plain: TestGateway;
/** The same two, with a quota of 5 requests a minute per key. */
let laneLimited: TestGateway;
let plainLimited: TestGateway;

beforeAll(async () => {
  const project = await makeProject();
  // One after another: each adds its key to the project's one key file.
  lane = await startTestGateway(project);
  plain = await startTestGateway(project, { fastLane: false });
  laneLimited = await startTestGateway(project, { rateLimitPerMinute: 5 });
  plainLimited = await startTestGateway(project, { rateLimitPerMinute: 5, fastLane: false });
});
afterAll(cleanup);

const counts = (g: TestGateway) => ({ ...g.gateway.lane!.counts });

/** One request on a fresh connection; the answer normalized where it moves with the clock, and the gateway's key id. */
async function ask(g: TestGateway, wire: string, opts: { head?: boolean } = {}): Promise<{ status: number; head: string; body: string }> {
  const x = await exchange(g.gateway.port, wire, { expect: 1, graceMs: 20, heads: [opts.head ?? false] });
  expect(x.responses.length, wire).toBe(1);
  const r = x.responses[0]!;
  const head = r.head
    .replace(/\r\nDate: [^\r]+/, '\r\nDate: (now)')
    .replace(/;t=\d+/g, ';t=(reset)')
    .replace(/\r\nretry-after: \d+/, '\r\nretry-after: (reset)')
    .replace(/"u\.([^."]+(?:\.[^."]+)*)\.[0-9a-z]+"/, '"u.$1.(time)"');
  // Each gateway has its own key: its id is the one difference allowed in a body.
  const body = r.body.toString('utf8').replace(/"issued_at":"[^"]+"/, '"issued_at":"(now)"').replaceAll(g.keyId, '(key id)');
  return { status: r.status, head, body };
}

describe('the lane gives node:http\'s answers, byte for byte', () => {
  let etag = '';
  beforeAll(async () => {
    etag = (await lane.verify(KNOWN)).headers.get('etag')!;
  });

  const key = () => `Authorization: Bearer ${lane.key}\r\n`;
  // [name, request, whether it is the lane's]; the plain gateway gets the same bytes with its own key.
  const cases: [string, (k: string) => string, boolean][] = [
    ['a record', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}\r\n`, true],
    ['HEAD of a record', (k) => `HEAD /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}\r\n`, true],
    ['If-None-Match with its entity tag (304)', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}If-None-Match: ${etag}\r\n\r\n`, true],
    ['If-None-Match weak, in a list', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}If-None-Match: "x", W/${etag}\r\n\r\n`, true],
    ['If-None-Match: *', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}If-None-Match: *\r\n\r\n`, true],
    ['If-None-Match of another tag (200)', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}If-None-Match: "nope"\r\n\r\n`, true],
    ['a never-audited domain', (k) => `GET /v1/verify?domain=never-seen.example HTTP/1.1\r\n${H}${k}\r\n`, true],
    ['a never-audited domain, If-None-Match: * (304)', (k) => `GET /v1/verify?domain=never-seen.example HTTP/1.1\r\n${H}${k}If-None-Match: *\r\n\r\n`, true],
    ['a never-audited domain, HEAD', (k) => `HEAD /v1/verify?domain=never-seen.example HTTP/1.1\r\n${H}${k}\r\n`, true],
    // Known absent by now (the first asking read the build): its record is filled into the answer in place.
    ['a never-audited domain asked again', (k) => `GET /v1/verify?domain=never-seen.example HTTP/1.1\r\n${H}${k}\r\n`, true],
    ['a never-audited domain, If-None-Match of another tag (200)', (k) => `GET /v1/verify?domain=never-seen.example HTTP/1.1\r\n${H}${k}If-None-Match: "u.never-seen.example.0"\r\n\r\n`, true],
    ['an upper-case, percent-encoded domain', (k) => `GET /v1/verify?domain=ACME%2DOUTDOOR.Example HTTP/1.1\r\n${H}${k}\r\n`, true],
    ['the domain among other parameters', (k) => `GET /v1/verify?x=1&domain=${OTHER}&y= HTTP/1.1\r\n${H}${k}\r\n`, true],
    ['no key (401)', () => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}\r\n`, true],
    ['a Basic credential (401)', () => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}Authorization: Basic YTpi\r\n\r\n`, true],
    ['a wrong key (401 invalid_token)', () => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}Authorization: Bearer mvr_0000000000_${'a'.repeat(43)}\r\n\r\n`, true],
    ['an invalid domain (400)', (k) => `GET /v1/verify?domain=bad..example HTTP/1.1\r\n${H}${k}\r\n`, true],
    ['no domain (400)', (k) => `GET /v1/verify HTTP/1.1\r\n${H}${k}\r\n`, true],
    ['the domain twice (400)', (k) => `GET /v1/verify?domain=${KNOWN}&domain=${OTHER} HTTP/1.1\r\n${H}${k}\r\n`, true],
    ['header names in other cases', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\nHOST: 127.0.0.1\r\n${k.replace('Authorization', 'aUTHORIZATION')}\r\n`, true],
    ['Content-Length: 0', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}Content-Length: 0\r\n\r\n`, true],
    ['another path that starts the same (404)', (k) => `GET /v1/verifyx?domain=${KNOWN} HTTP/1.1\r\n${H}${k}\r\n`, false],
    ['a trailing slash (404)', (k) => `GET /v1/verify/?domain=${KNOWN} HTTP/1.1\r\n${H}${k}\r\n`, false],
    ['an absolute-form target', (k) => `GET http://127.0.0.1/v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}\r\n`, false],
    ['POST (405)', (k) => `POST /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}Content-Length: 0\r\n\r\n`, false],
    ['HTTP/1.0', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.0\r\n${H}${k}\r\n`, false],
    ['Connection: close', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}Connection: close\r\n\r\n`, false],
    ['two Authorization headers', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}Authorization: Bearer other\r\n\r\n`, false],
    ['no Host (400 from Node)', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${k}\r\n`, false],
    ['Expect: 100-continue', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}Expect: 100-continue\r\n\r\n`, false],
    ['a body by Content-Length', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}Content-Length: 2\r\n\r\nhi`, false],
    ['a chunked body', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, false],
    // What was read ends as a head does (the lane's shortcut for one whole head is tried first), but is not one lone head.
    ['a body that ends with a blank line', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}Content-Length: 4\r\n\r\n\r\n\r\n`, false],
    ['a malformed header line (400 from Node)', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}Bad Header\r\n\r\n`, false],
    ['more than 32 header lines', (k) => `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}${k}${Array.from({ length: 40 }, (_, i) => `X-${i}: ${i}\r\n`).join('')}\r\n`, false],
  ];

  it.each(cases)('%s', async (_name, make, lanes) => {
    const before = counts(lane);
    const head = make('').startsWith('HEAD');
    const fromLane = await ask(lane, make(key()), { head });
    const fromNode = await ask(plain, make(`Authorization: Bearer ${plain.key}\r\n`), { head });
    expect(fromLane).toEqual(fromNode);
    expect(fromLane.status).toBeLessThan(500);
    const after = counts(lane);
    expect(after.answered - before.answered, 'answered in the lane').toBe(lanes ? 1 : 0);
    expect(after.handedOver - before.handedOver, 'handed to node:http').toBe(lanes ? 0 : 1);
  });

  it('the quota: the same counters on every kind of answer, and the same 429', async () => {
    const etag = (await plain.verify(KNOWN)).headers.get('etag')!;
    const request = (domain: string, extra = '') => (g: TestGateway) => `GET /v1/verify?domain=${domain} HTTP/1.1\r\n${H}Authorization: Bearer ${g.key}\r\n${extra}\r\n`;
    const asked: [(g: TestGateway) => string, number][] = [
      [request(KNOWN), 200],
      [request('never-seen-quota.example'), 200],
      [request(KNOWN, `If-None-Match: ${etag}\r\n`), 304],
      [request('never-seen-quota.example', 'If-None-Match: *\r\n'), 304],
      // Known absent now: filled in place, followed by the quota's lines.
      [request('never-seen-quota.example'), 200],
      [request(KNOWN), 429],
    ];
    for (const [make, status] of asked) {
      const [a, b] = [await ask(laneLimited, make(laneLimited)), await ask(plainLimited, make(plainLimited))];
      expect(a).toEqual(b);
      expect(a.status).toBe(status);
      expect(a.head).toContain('\r\nratelimit-policy: "per-key";q=5;w=60\r\nratelimit: "per-key";r=');
    }
    expect(laneLimited.gateway.lane!.counts.answered).toBe(asked.length);
  });

  it('the gateway without the lane has none', () => {
    expect(plain.gateway.lane).toBeNull();
  });

  it('logs a lane request like any other: method, path, status, key id, domain, code', async () => {
    await lane.verify(OTHER);
    const ok = await waitForLog(lane, (l) => l.msg === 'request' && l.domain === OTHER);
    expect(ok).toMatchObject({ level: 'info', method: 'GET', path: '/v1/verify', status: 200, key_id: lane.keyId });
    expect(typeof ok.duration_ms).toBe('number');
    await lane.verify(OTHER, { key: null });
    const refused = await waitForLog(lane, (l) => l.msg === 'request' && l.code === 'UNAUTHORIZED');
    expect(refused).toMatchObject({ method: 'GET', path: '/v1/verify', status: 401, key_id: null });
  });
});

/** A kept-open connection that reads answers one by one. */
class Connection {
  readonly socket: Socket;
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  ended = false;
  closed: Promise<void>;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('data', (d: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, d]);
      this.waiting?.();
    });
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      this.socket.on('close', () => {
        this.ended = true;
        this.waiting?.();
        resolve();
      }),
    );
  }

  send(data: string): void {
    this.socket.write(data);
  }

  /** The next answer (parsed as the security suites parse them). */
  async next(head = false, timeoutMs = 3000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = parseOne(this.buffered, head, this.ended);
      if (parsed) {
        this.buffered = this.buffered.subarray(parsed.used);
        return parsed.response;
      }
      if (this.ended || Date.now() > deadline) throw new Error(`no complete answer (${this.ended ? 'closed' : 'timed out'}); have ${JSON.stringify(this.buffered.toString('latin1'))}`);
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 50);
      });
      this.waiting = null;
    }
  }

  /** Nothing more was received. */
  get rest(): number {
    return this.buffered.length;
  }
}

const verifyWire = (g: TestGateway, domain: string) => `GET /v1/verify?domain=${domain} HTTP/1.1\r\n${H}Authorization: Bearer ${g.key}\r\n\r\n`;
const domainOf = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { domain: string }).domain;

describe('connections', () => {
  it('pipelined: a lane request, another route, a lane request: three answers in order (the rest of the connection is node:http\'s)', async () => {
    const before = counts(lane);
    const c = new Connection(lane.gateway.port);
    c.send(`${verifyWire(lane, KNOWN)}GET /healthz HTTP/1.1\r\n${H}\r\n${verifyWire(lane, OTHER)}`);
    const answers = [await c.next(), await c.next(), await c.next()];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(domainOf(answers[0]!.body)).toBe(KNOWN);
    expect(JSON.parse(answers[1]!.body.toString('utf8')).status).toBe('ok');
    expect(domainOf(answers[2]!.body)).toBe(OTHER);
    const after = counts(lane);
    expect([after.answered - before.answered, after.handedOver - before.handedOver]).toEqual([1, 1]);
    c.socket.destroy();
  });

  it('keep-alive: record answers, then an MCP call with a body on the same connection', async () => {
    const c = new Connection(lane.gateway.port);
    for (const domain of [KNOWN, OTHER, KNOWN]) {
      c.send(verifyWire(lane, domain));
      const a = await c.next();
      expect(a.status).toBe(200);
      expect(domainOf(a.body)).toBe(domain);
    }
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    c.send(`POST /mcp HTTP/1.1\r\n${H}Authorization: Bearer ${lane.key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    const mcp = await c.next();
    expect(mcp.status).toBe(200);
    expect(JSON.parse(mcp.body.toString('utf8')).result.tools.map((t: { name: string }) => t.name)).toContain('verify_merchant');
    c.socket.destroy();
  });

  it('answers waiting on file reads keep their order', async () => {
    // A gateway of its own, so nothing is cached yet: every answer waits on a read.
    const g = await startTestGateway(lane.project);
    const c = new Connection(g.gateway.port);
    const order = [OTHER, KNOWN, 'never-seen.example', OTHER];
    c.send(order.map((d) => verifyWire(g, d)).join(''));
    const domains = [];
    for (let i = 0; i < order.length; i++) domains.push(domainOf((await c.next()).body));
    expect(domains).toEqual(order);
    expect(g.gateway.lane!.counts).toEqual({ answered: 4, handedOver: 0 });
    c.socket.destroy();
    await g.close();
  });

  it('a client that asks without reading is read no further until it reads (bounded memory), then gets every answer, in order', async () => {
    const g = await startTestGateway(lane.project);
    const c = new Connection(g.gateway.port);
    c.socket.pause();
    const total = 64 * 300;
    const domains = [KNOWN, OTHER];
    const wires = domains.map((d) => verifyWire(g, d));
    // About 2 MB of requests, about 20 MB of answers: far more than the sockets' buffers hold.
    for (let i = 0; i < total; i += 64) c.send(Array.from({ length: 64 }, (_, j) => wires[(i + j) % 2]).join(''));
    await sleep(1000);
    const answeredWhileNotRead = g.gateway.lane!.counts.answered;
    await sleep(500);
    expect(g.gateway.lane!.counts.answered, 'the gateway stopped answering').toBe(answeredWhileNotRead);
    expect(answeredWhileNotRead).toBeLessThan(total / 2);
    c.socket.resume();
    for (let i = 0; i < total; i++) {
      const a = await c.next(false, 10_000);
      expect(a.status).toBe(200);
      if (i % 997 === 0 || i === total - 1) expect(domainOf(a.body)).toBe(domains[i % 2]);
    }
    expect(g.gateway.lane!.counts).toEqual({ answered: total, handedOver: 0 });
    await sleep(100);
    expect(c.rest).toBe(0);
    c.socket.destroy();
    await g.close();
  }, 60_000);

  it('a head that arrives in pieces is answered once, in the lane', async () => {
    const before = counts(lane);
    const c = new Connection(lane.gateway.port);
    const wire = verifyWire(lane, KNOWN);
    for (const piece of [wire.slice(0, 3), wire.slice(3, 40), wire.slice(40, -1), wire.slice(-1)]) {
      c.send(piece);
      await sleep(50);
    }
    const a = await c.next();
    expect(a.status).toBe(200);
    expect(domainOf(a.body)).toBe(KNOWN);
    await sleep(100);
    expect(c.rest).toBe(0);
    expect([counts(lane).answered - before.answered, counts(lane).handedOver - before.handedOver]).toEqual([1, 0]);
    c.socket.destroy();
  });

  it('a piece of a head that is already wrong is handed over at once (node:http\'s 400), not kept waiting', async () => {
    const before = counts(lane);
    const c = new Connection(lane.gateway.port);
    c.send('GET /v1/verify?domain=a HTTP/1.1\nHost');
    const a = await c.next();
    expect(a.status).toBe(400);
    await c.closed;
    expect(counts(lane).handedOver - before.handedOver).toBe(1);
  });

  it('the client ends its side after a request: the answer, then the connection is closed', async () => {
    const c = new Connection(lane.gateway.port);
    c.socket.end(verifyWire(lane, KNOWN));
    const a = await c.next();
    expect(a.status).toBe(200);
    await c.closed;
    expect(c.rest).toBe(0);
  });

  it('an idle connection is closed after keepAliveTimeout (5 s), without an answer', async () => {
    const c = new Connection(lane.gateway.port);
    c.send(verifyWire(lane, KNOWN));
    await c.next();
    const answeredAt = performance.now();
    await c.closed;
    const idle = performance.now() - answeredAt;
    expect(idle).toBeGreaterThan(4_000);
    expect(idle).toBeLessThan(7_000);
    expect(c.rest).toBe(0);
  }, 10_000);

  it('shutdown: an idle lane connection is closed at once and close() resolves promptly', async () => {
    const g = await startTestGateway(lane.project);
    const c = new Connection(g.gateway.port);
    c.send(verifyWire(g, KNOWN));
    expect((await c.next()).status).toBe(200);
    const started = performance.now();
    await g.close();
    await c.closed;
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('a key revoked while a connection is open is refused on that connection (its memo of the key holds for one load of the key file)', async () => {
    const { key, id } = await addApiKey(lane, 'revoked-mid-connection');
    await lane.gateway.ctx.apiKeys.refresh();
    const wire = `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}Authorization: Bearer ${key}\r\n\r\n`;
    const c = new Connection(lane.gateway.port);
    for (let i = 0; i < 2; i++) {
      c.send(wire);
      expect((await c.next()).status).toBe(200);
    }
    await revokeApiKey(lane.project.apiKeysFile, id);
    await lane.gateway.ctx.apiKeys.refresh();
    c.send(wire);
    const refused = await c.next();
    expect(refused.status).toBe(401);
    expect(refused.head).toContain('error="invalid_token"');
    // And the gateway's own key, on the same connection, is still accepted.
    c.send(verifyWire(lane, KNOWN));
    expect((await c.next()).status).toBe(200);
    c.socket.destroy();
  });

  it('a refused key is refused again on that connection without a second look, until the key file changes: restored there, it is accepted on the same connection', async () => {
    const { key, id } = await addApiKey(lane, 'refused-then-restored');
    await lane.gateway.ctx.apiKeys.refresh();
    const file = lane.project.apiKeysFile;
    const withKey = await readFile(file, 'utf8');
    await revokeApiKey(file, id);
    await lane.gateway.ctx.apiKeys.refresh();
    const wire = `GET /v1/verify?domain=${KNOWN} HTTP/1.1\r\n${H}Authorization: Bearer ${key}\r\n\r\n`;
    const c = new Connection(lane.gateway.port);
    for (let i = 0; i < 2; i++) {
      c.send(wire);
      const refused = await c.next();
      expect(refused.status).toBe(401);
      expect(refused.head).toContain('error="invalid_token"');
    }
    await writeFile(file, withKey);
    await lane.gateway.ctx.apiKeys.refresh();
    c.send(wire);
    expect((await c.next()).status).toBe(200);
    c.socket.destroy();
  });

  it('a raw exchange in the lane says keep-alive, as node:http does', async () => {
    const x = await exchange(lane.gateway.port, verifyWire(lane, KNOWN), { expect: 1, graceMs: 50 });
    const r = x.responses[0]!;
    expect(header(r, 'connection')).toBe('keep-alive');
    expect(header(r, 'keep-alive')).toBe('timeout=5');
    expect(x.closed).toBe(false);
  });
});

describe('mvr serve --no-fast-lane', () => {
  it('turns the lane off; it is on by default', async () => {
    const { parseArgs } = await import('citty');
    const { serveArgs } = await import('../../scripts/config.ts');
    const { gatewayOptionsFromArgs } = await import('../../scripts/commands/serve.ts');
    const env = { MVR_RECORDS_DIR: lane.project.recordsDir, MVR_PUBLIC_DIR: lane.project.publicDir };
    const off = await gatewayOptionsFromArgs(parseArgs(['--no-fast-lane'], serveArgs), env);
    const on = await gatewayOptionsFromArgs(parseArgs([], serveArgs), env);
    expect([off.fastLane, on.fastLane]).toEqual([false, true]);
  });
});
