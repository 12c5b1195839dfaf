/**
 * `npm run bench:slow-readers [-- --readers 300 --lookups 4000 --streams-per-key N]`: what clients
 * that never read cost a gateway (decision 0080). One gateway process (`mvr serve`, quotas on but
 * far above the load, metrics on) over the sample audits with a 64 MiB pack added to its live build;
 * then:
 * 1. other keys' lookups alone: p50 and p99 of `GET /v1/verify` by 4 ordinary keys, 8 at once
 *    (three rounds, the middle p99), and the gateway's RSS after them (idle);
 * 2. `--readers` connections on ONE mirror-scoped key asking for the pack and reading nothing
 *    past the head's first bytes: how many the gateway streams and how many it refuses (429), its RSS with them held,
 *    and the same lookups again beside them;
 * 3. how long until the gateway has cut every one of them (`mvr_streams_open` back to 0; the
 *    write idle deadline, MVR_WRITE_IDLE_MS, 30 s unless set).
 * `--streams-per-key 1000` shows what the stream cap saves. Figures only: nothing here is asserted.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createApiKey } from '../access/api-keys.ts';
import { CURRENT_LINK } from '../core/layout.ts';
import { parseMetrics, sampleOf } from '../test/support/metrics-text.ts';
import { freePort } from '../test/support/ports.ts';
import { freshProject, GOLD } from '../test/support/project.ts';

const { values } = parseArgs({
  options: {
    readers: { type: 'string', default: '300' },
    lookups: { type: 'string', default: '4000' },
    'streams-per-key': { type: 'string' },
  },
});
const READERS = Number(values.readers);
const LOOKUPS = Number(values.lookups);
const ROOT = resolve(import.meta.dirname, '..');
const MiB = 1024 * 1024;
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** The resident set of a process, MB, from /proc. */
async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/** `count` lookups of GOLD spread over `keys`, `concurrency` at once on kept-alive connections: p50 and p99 in ms. */
async function lookups(
  port: number,
  keys: string[],
  count: number,
  concurrency = 8,
): Promise<{ p50: number; p99: number; failed: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const times: number[] = [];
  let failed = 0;
  let next = 0;
  const one = (key: string) =>
    new Promise<void>((done) => {
      const started = performance.now();
      const req = request(
        { host: '127.0.0.1', port, path: `/v1/verify?domain=${GOLD}`, agent, headers: { authorization: `Bearer ${key}` } },
        (res) => {
          res.resume();
          res.on('end', () => {
            times.push(performance.now() - started);
            if (res.statusCode !== 200) failed++;
            done();
          });
        },
      );
      req.on('error', () => {
        failed++;
        done();
      });
      req.end();
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await one(keys[next++ % keys.length]!);
    }),
  );
  agent.destroy();
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length * 0.5)]!, p99: times[Math.floor(times.length * 0.99)]!, failed };
}

/** A connection asking for `path` and never reading; resolves with its status line once the head came (or null, still waiting). */
function slowReader(port: number, path: string, key: string): { socket: Socket; status: Promise<number | null> } {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  const status = new Promise<number | null>((resolveStatus) => {
    // The head is read, then nothing more: the socket is paused after its first bytes.
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolveStatus(Number(/^HTTP\/1\.1 (\d+)/.exec(chunk.toString('latin1'))?.[1] ?? 0));
    });
    setTimeout(() => resolveStatus(null), 5_000).unref();
  });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  return { socket, status };
}

async function metric(url: string, name: string): Promise<number> {
  return sampleOf(parseMetrics(await (await fetch(url)).text()), name);
}

const work = await mkdtemp(join(tmpdir(), 'mvr-bench-slow-'));
let gateway: ChildProcess | null = null;
const sockets: Socket[] = [];
try {
  const project = await freshProject(work, {});
  const body = randomBytes(64 * MiB);
  const pack = `packs/${createHash('sha256').update(body).digest('hex')}.jsonl`;
  const liveDir = await realpath(join(project.recordsDir, CURRENT_LINK));
  await writeFile(join(liveDir, pack), body);
  const build = liveDir.split('/').pop()!;
  const mirrorKey = (await createApiKey(project.apiKeysFile, 'slow readers', { scopes: ['mirror'] })).key;
  const others = await Promise.all([1, 2, 3, 4].map(async (i) => (await createApiKey(project.apiKeysFile, `other ${i}`)).key));
  const [port, metricsPort] = [await freePort(), await freePort()];
  const args = [
    ...['serve', '--quiet', '--port', String(port), '--metrics-port', String(metricsPort)],
    ...['--records', project.recordsDir, '--public', project.publicDir, '--api-keys', project.apiKeysFile],
    ...['--rate-limit', '1000000000', '--unauth-rate-limit', '1000000000'],
    ...(values['streams-per-key'] ? ['--streams-per-key', values['streams-per-key']] : []),
  ];
  gateway = spawn(process.execPath, [join(ROOT, 'bin/mvr.js'), ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  for (let tries = 0; ; tries++) {
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (tries > 200) throw new Error('the gateway did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  const pid = gateway.pid!;

  // Three rounds each, the middle p99 kept: a shared 2-core machine's p99 moves between runs.
  const rounds = async () => {
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await lookups(port, others, LOOKUPS));
    runs.sort((a, b) => a.p99 - b.p99);
    return { ...runs[1]!, failed: runs.reduce((n, r) => n + r.failed, 0) };
  };
  await lookups(port, others, 1000);
  const alone = await rounds();
  // Idle: after the same load, so a heap grown by the lookups is not counted against the readers.
  const idle = await rssMb(pid);

  const started = performance.now();
  const readers = Array.from({ length: READERS }, () => slowReader(port, `/v1/mirror/builds/${build}/${pack}`, mirrorKey));
  sockets.push(...readers.map((r) => r.socket));
  const statuses = await Promise.all(readers.map((r) => r.status));
  const count = (s: number) => statuses.filter((x) => x === s).length;
  // A client told 429 goes away: the held state is the streams the gateway took.
  for (const [i, r] of readers.entries()) if (statuses[i] === 429) r.socket.destroy();
  const held = await rssMb(pid);
  const beside = await rounds();
  const peak = Math.max(held, await rssMb(pid));
  const streaming = await metric(metricsUrl, 'mvr_streams_open');
  for (;;) {
    if ((await metric(metricsUrl, 'mvr_streams_open')) === 0) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const cutAfter = (performance.now() - started) / 1000;
  const cuts = await metric(metricsUrl, 'mvr_write_idle_cuts_total');

  console.log(
    `| slow readers on one mirror key | ${READERS} (${count(200)} streamed, ${count(429)} refused 429, ${statuses.filter((s) => s === null).length} no head) |`,
  );
  console.log(`| streams open while held | ${streaming} |`);
  console.log(
    `| RSS idle / readers held / after the lookups beside them | ${fmt(idle, 1)} / ${fmt(held, 1)} / ${fmt(peak, 1)} MB (+${fmt(peak - idle, 1)} MB) |`,
  );
  console.log(`| other keys' lookups, p50 / p99, alone | ${fmt(alone.p50, 2)} / ${fmt(alone.p99, 2)} ms (${alone.failed} failed) |`);
  console.log(
    `| the same beside the readers | ${fmt(beside.p50, 2)} / ${fmt(beside.p99, 2)} ms (${beside.failed} failed; p99 ${fmt((beside.p99 / alone.p99 - 1) * 100, 0)}%) |`,
  );
  console.log(`| every reader cut after | ${fmt(cutAfter, 1)} s (${cuts} idle cuts) |`);
} finally {
  for (const s of sockets) s.destroy();
  gateway?.kill('SIGTERM');
  await rm(work, { recursive: true, force: true });
}
