/**
 * What one API key may take of the gateway's answers (core/limits.ts, ANSWER_LIMITS), on the real
 * gateway with real mirror-scoped keys: a mirror file costs a quota unit per MiB, so a key over
 * its bytes is refused (429) while another key is served, with the quota in memory and in Redis;
 * a key holds at most `streamsPerKey` streams (429 TOO_MANY_STREAMS, Retry-After); a client that
 * stops reading buffers at most one chunk beside the socket's buffer, and is cut after the idle
 * deadline (logged, counted), its stream slot given back.
 */
import { createHash, randomBytes } from 'node:crypto';
import { realpath, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CURRENT_LINK } from '../../core/layout.ts';
import { ANSWER_LIMITS, quotaUnitsOf } from '../../core/limits.ts';
import { runCli } from '../support/cli.ts';
import { addApiKey, cleanup, startTestGateway, type TestGateway, waitForLog } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { parseMetrics, sampleOf } from '../support/metrics-text.ts';
import { needing } from '../support/programs.ts';
import { makeProject, type Project } from '../support/project.ts';
import { REDIS, startRedis } from '../support/redis-server.ts';
import { poll, waitFor } from '../support/wait.ts';

afterAll(cleanup);

const MiB = 1024 * 1024;
/** A clock that never moves: a quota's window never ends during a test. */
const NOW = () => Date.parse('2026-12-07T00:00:00Z');
/** The most a response may buffer for a client that reads nothing: one chunk beside what the socket held under its high-water mark (16 KiB). */
const BUFFER_BOUND = ANSWER_LIMITS.writeChunkBytes + 16 * 1024;

/** Puts a pack of `bytes` random bytes into the project's live build; returns its path under the build. */
async function addPack(project: Project, bytes: number): Promise<string> {
  const body = randomBytes(bytes);
  const name = `packs/${createHash('sha256').update(body).digest('hex')}.jsonl`;
  await writeFile(join(await realpath(join(project.recordsDir, CURRENT_LINK)), name), body);
  return name;
}

const liveBuild = async (g: TestGateway, key: string) => (await g.request('/v1/mirror', { key })).json.build as string;

/** The `r` (units left) of a RateLimit field. */
const remaining = (field: string | null) => Number(/;r=(\d+)/.exec(field ?? '')?.[1]);

const sockets = new Set<Socket>();
afterEach(() => {
  for (const s of sockets) s.destroy();
  sockets.clear();
});

/** A client that asks for `path` and never reads a byte of the answer. */
function stalledGet(g: TestGateway, path: string, key: string): Socket {
  const socket = connect(g.gateway.port, '127.0.0.1');
  socket.pause();
  socket.on('error', () => undefined);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: gateway.test\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  sockets.add(socket);
  return socket;
}

/**
 * A whole mirror file costs its MiB, a range its own: the key runs out while another key is served;
 * past the quota, 429 RATE_LIMITED with Retry-After, and an answer costing more than the whole quota says so.
 */
async function bytesBudget(g: TestGateway, quota: number, spender: string, other: string) {
  const pack = await addPack(g.project, 5 * MiB + 1);
  const cost = quotaUnitsOf(5 * MiB + 1);
  expect(cost).toBe(6);
  const build = await liveBuild(g, spender);
  const file = (key: string, headers: Record<string, string> = {}) => g.request(`/v1/mirror/builds/${build}/${pack}`, { key, headers });
  let left = quota - 1;
  for (;;) {
    const r = await file(spender);
    if (r.status !== 200) {
      // Refused when what is left is less than the file costs, and the refusal cost nothing.
      expect(left).toBeLessThan(cost);
      expect(expectProblem(r, 429, 'RATE_LIMITED').detail).toMatch(/costs 5 more/);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Its one unit at the gate was paid, as every request's is.
      left -= 1;
      break;
    }
    left -= cost;
    expect(r.bytes.length).toBe(5 * MiB + 1);
    expect(remaining(r.headers.get('ratelimit'))).toBe(left);
  }
  // A few bytes cost one unit; the other key is served the whole file.
  const few = await file(spender, { range: 'bytes=0-9' });
  expect({ status: few.status, left: remaining(few.headers.get('ratelimit')) }).toEqual({ status: 206, left: left - 1 });
  const served = await file(other);
  expect({ status: served.status, bytes: served.bytes.length }).toEqual({ status: 200, bytes: 5 * MiB + 1 });
  expect(remaining(served.headers.get('ratelimit'))).toBe(quota - cost);
  // A file costing more than the whole quota is never granted, and the refusal says to ask for less.
  const huge = await addPack(g.project, (quota + 3) * MiB);
  const refused = await g.request(`/v1/mirror/builds/${build}/${huge}`, { key: other });
  expect(expectProblem(refused, 429, 'RATE_LIMITED').detail).toMatch(/more than the whole quota/);
}

describe('a mirror file costs a quota unit per MiB', () => {
  it('in memory: a key over its bytes is refused (429) while another key is served', async () => {
    const quota = 22;
    const g = await startTestGateway(await makeProject(), { rateLimitPerMinute: quota, now: NOW });
    const [spender, other] = [(await addApiKey(g, 'a', ['mirror'])).key, (await addApiKey(g, 'b', ['mirror'])).key];
    await bytesBudget(g, quota, spender, other);
  });

  describe.skipIf(!REDIS.path)(needing(REDIS, 'bytes against a quota shared through Redis (real redis-server)'), () => {
    it('through Redis: the same, leases taken for the bytes', async () => {
      const redis = await startRedis();
      try {
        const quota = 23;
        const g = await startTestGateway(await makeProject(), { rateLimitPerMinute: quota, now: NOW, redisUrl: redis.url });
        const create = async (label: string) => {
          const r = await runCli(['apikey', 'create', '--label', label, '--scope', 'mirror', '--json', '--redis', redis.url]);
          const key = (JSON.parse(r.stdout) as { key: string }).key;
          g.secrets.add(key);
          // Seen once the gateway has reloaded its keys (its quota is spent by this look: one unit).
          await poll(
            () => g.request('/v1/mirror', { key }),
            (reply) => reply.status === 200,
            { timeoutMs: 20_000 },
          );
          return key;
        };
        const [spender, other] = [await create('a'), await create('b')];
        // Each key spent a unit on being seen: what is left is a quota of one less.
        await bytesBudget(g, quota - 1, spender, other);
      } finally {
        await redis.stop();
      }
    });
  });
});

describe('streams a key holds, and clients that stop reading', () => {
  it('a key holds at most --streams-per-key streams: 429 TOO_MANY_STREAMS, another key served; a slow reader buffers at most a chunk', async () => {
    const g = await startTestGateway(await makeProject(), { streamsPerKey: 2, now: NOW });
    const [key, other] = [(await addApiKey(g, 'a', ['mirror'])).key, (await addApiKey(g, 'b', ['mirror'])).key];
    // Larger than what the kernel's socket buffers take on loopback, so the gateway must wait for the reader.
    const pack = await addPack(g.project, 24 * MiB);
    const build = await liveBuild(g, key);
    const writes = g.gateway.services.writes;
    const stalled = [stalledGet(g, `/v1/mirror/builds/${build}/${pack}`, key), stalledGet(g, `/v1/mirror/builds/${build}/${pack}`, key)];
    await waitFor(() => writes.openStreams === 2 && writes.buffered().every((b) => b > 0), 'two streams waiting for their readers');
    expect(Math.max(...writes.buffered())).toBeLessThanOrEqual(BUFFER_BOUND);

    const third = await g.request(`/v1/mirror/builds/${build}/statement.json`, { key });
    expectProblem(third, 429, 'TOO_MANY_STREAMS');
    expect(third.headers.get('retry-after')).toBe('1');
    expect((await g.request(`/v1/mirror/builds/${build}/statement.json`, { key: other })).status).toBe(200);
    // The ordinary routes are not streams: the key still looks things up.
    expect((await g.request('/v1/mirror', { key })).status).toBe(200);

    // A client gone gives its slot back.
    stalled[0]!.destroy();
    await waitFor(() => writes.openStreams === 1, 'the slot of the client gone given back');
    expect((await g.request(`/v1/mirror/builds/${build}/statement.json`, { key })).status).toBe(200);
    expect(writes.refused).toBe(1);
  });

  it('a client that reads nothing is cut after the idle deadline, logged and counted, and its slot given back', async () => {
    const g = await startTestGateway(await makeProject(), {
      streamsPerKey: 1,
      now: NOW,
      connectionTimeouts: { writeIdleMs: 200 },
      metrics: { listen: { host: '127.0.0.1', port: 0 } },
    });
    const key = (await addApiKey(g, 'a', ['mirror'])).key;
    const pack = await addPack(g.project, 24 * MiB);
    const build = await liveBuild(g, key);
    const writes = g.gateway.services.writes;
    stalledGet(g, `/v1/mirror/builds/${build}/${pack}`, key);
    const cut = await waitForLog(g, (line) => line.msg.includes('connection cut'));
    expect(cut).toMatchObject({ level: 'info', idle_ms: 200, path: `/v1/mirror/builds/${build}/${pack}` });
    expect(cut.buffered_bytes).toBeLessThanOrEqual(BUFFER_BOUND);
    expect(writes.idleCuts).toBe(1);
    await waitFor(() => writes.openStreams === 0, 'the slot of the client cut given back');
    const next = await g.request(`/v1/mirror/builds/${build}/statement.json`, { key });
    expect(next.status).toBe(200);
    const metrics = parseMetrics(await (await fetch(g.gateway.metricsUrl!)).text());
    expect([sampleOf(metrics, 'mvr_write_idle_cuts_total'), sampleOf(metrics, 'mvr_streams_open')]).toEqual([1, 0]);
  });
});
