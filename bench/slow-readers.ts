/**
 * `npm run bench:slow-readers [-- --readers 300 --lookups 4000 --pairs 6 --streams-per-key N]`: what
 * clients that never read cost a gateway (decision 0080). One gateway process (`mvr serve`, quotas
 * on but far above the load, metrics on) over the sample audits with a 64 MiB pack added to its live
 * build; then, in `--pairs` pairs of rounds:
 * - a round of other keys' lookups alone: `GET /v1/verify` by 4 ordinary keys, 8 at once, p50 and p99;
 * - a round beside `--readers` connections on ONE mirror-scoped key asking for the pack and reading
 *   nothing past the head's first bytes (the gateway streams some, refuses the rest 429, whose
 *   clients go away), which are closed after the round (the gateway's streams back to 0 before the
 *   next round).
 * The two rounds of a pair run one after the other, in turns alone first and beside first, so a
 * shared machine's drift falls on both; the figure is the median over the pairs of the beside/alone
 * p99 ratio (`--readers 0` gives the same ratio for two rounds alone: the noise). Also the gateway's
 * RSS idle and with the readers held, the CPU the readers' arrival cost it (their refusals), and at
 * the end how long until the gateway has cut a last set of them by itself (`mvr_streams_open` back to
 * 0; the write idle deadline, MVR_WRITE_IDLE_MS, 30 s unless set). `--streams-per-key 1000` shows what
 * the stream cap saves. Figures only: nothing here is asserted.
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
import { HeapInspector } from './soak/inspector.ts';

const { values } = parseArgs({
  options: {
    readers: { type: 'string', default: '300' },
    lookups: { type: 'string', default: '4000' },
    pairs: { type: 'string', default: '6' },
    'streams-per-key': { type: 'string' },
  },
});
const READERS = Number(values.readers);
const LOOKUPS = Number(values.lookups);
const PAIRS = Number(values.pairs);
const ROOT = resolve(import.meta.dirname, '..');
const MiB = 1024 * 1024;
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** The CPU a process has used (user + system), ms, from /proc (clock ticks of 10 ms). */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

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
let inspector: HeapInspector | null = null;
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
  const [port, metricsPort, inspectPort] = [await freePort(), await freePort(), await freePort()];
  const args = [
    ...['serve', '--quiet', '--port', String(port), '--metrics-port', String(metricsPort)],
    ...['--records', project.recordsDir, '--public', project.publicDir, '--api-keys', project.apiKeysFile],
    ...['--rate-limit', '1000000000', '--unauth-rate-limit', '1000000000'],
    ...(values['streams-per-key'] ? ['--streams-per-key', values['streams-per-key']] : []),
  ];
  // The inspector forces a full GC before each round, so no round collects the garbage of what came before it.
  gateway = spawn(process.execPath, [`--inspect=127.0.0.1:${inspectPort}`, join(ROOT, 'bin/mvr.js'), ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
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
  inspector = new HeapInspector(inspectPort);
  await inspector.connect();

  const readerPath = `/v1/mirror/builds/${build}/${pack}`;
  const streamsOpen = () => metric(metricsUrl, 'mvr_streams_open');
  const waitNoStreams = async () => {
    while ((await streamsOpen()) > 0) await new Promise((r) => setTimeout(r, 50));
  };
  /** A full GC in the gateway, then waits (at most 10 s) until it has used no more than 10 ms of CPU in half a second: done with what came before. */
  const settled = async () => {
    await inspector!.heapAfterGc();
    for (let i = 0, last = await cpuMs(pid); i < 20; i++) {
      await new Promise((r) => setTimeout(r, 500));
      const now = await cpuMs(pid);
      if (now - last <= 10) return;
      last = now;
    }
  };
  /** Opens the readers and waits for each one's head; the refused ones' clients go away. */
  const openReaders = async () => {
    const cpuBefore = await cpuMs(pid);
    const readers = Array.from({ length: READERS }, () => slowReader(port, readerPath, mirrorKey));
    sockets.push(...readers.map((r) => r.socket));
    const statuses = await Promise.all(readers.map((r) => r.status));
    for (const [i, r] of readers.entries()) if (statuses[i] === 429) r.socket.destroy();
    return { readers, statuses, cpu: (await cpuMs(pid)) - cpuBefore };
  };

  await lookups(port, others, 1000);
  await lookups(port, others, LOOKUPS);
  // Idle: after the same load, so a heap grown by the lookups is not counted against the readers.
  const idle = await rssMb(pid);
  /** A round of the other keys' lookups, with the gateway CPU it took (µs a lookup). */
  const round = async () => {
    const before = await cpuMs(pid);
    const r = await lookups(port, others, LOOKUPS);
    return { ...r, cpuUs: (((await cpuMs(pid)) - before) * 1000) / LOOKUPS };
  };
  type Round = Awaited<ReturnType<typeof round>>;
  const pairs: { alone: Round; beside: Round; held: number; streaming: number; statuses: (number | null)[]; cpu: number }[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const besideRound = async () => {
      const opened = await openReaders();
      // Their arrival (292 refusals, eight streams filling their sockets' buffers) is counted above; the round measures them held.
      await settled();
      const held = await rssMb(pid);
      const streaming = await streamsOpen();
      const beside = await round();
      const heldAfter = Math.max(held, await rssMb(pid));
      for (const r of opened.readers) r.socket.destroy();
      await waitNoStreams();
      return { beside, held: heldAfter, streaming, statuses: opened.statuses, cpu: opened.cpu };
    };
    // In turns alone first and beside first: drift over the pair falls on each side alike.
    if (i % 2 === 0) {
      await settled();
      const alone = await round();
      pairs.push({ alone, ...(await besideRound()) });
    } else {
      const b = await besideRound();
      await settled();
      pairs.push({ alone: await round(), ...b });
    }
  }

  // Last, readers left to the gateway: how long until it has cut every stream it took.
  const started = performance.now();
  const last = await openReaders();
  await waitNoStreams();
  const cutAfter = (performance.now() - started) / 1000;
  const cuts = await metric(metricsUrl, 'mvr_write_idle_cuts_total');
  for (const r of last.readers) r.socket.destroy();

  const statuses = pairs[0]?.statuses ?? last.statuses;
  const count = (s: number) => statuses.filter((x) => x === s).length;
  const p99Ratios = pairs.map((p) => p.beside.p99 / p.alone.p99);
  const p50Ratios = pairs.map((p) => p.beside.p50 / p.alone.p50);
  const pct = (r: number) => `${r >= 1 ? '+' : ''}${fmt((r - 1) * 100, 0)}%`;
  const failed = pairs.reduce((n, p) => n + p.alone.failed + p.beside.failed, 0);
  const peak = Math.max(...pairs.map((p) => p.held), idle);
  console.log(
    `| slow readers on one mirror key, each set | ${READERS} (${count(200)} streamed, ${count(429)} refused 429, ${statuses.filter((s) => s === null).length} no head) |`,
  );
  console.log(`| streams open while held | ${pairs.map((p) => p.streaming).join(', ')} |`);
  console.log(`| gateway CPU while a set of readers arrived (their refusals) | ${pairs.map((p) => fmt(p.cpu)).join(', ')} ms |`);
  console.log(`| RSS idle / most with readers held | ${fmt(idle, 1)} / ${fmt(peak, 1)} MB (+${fmt(peak - idle, 1)} MB) |`);
  for (const [i, p] of pairs.entries())
    console.log(
      `| pair ${i + 1} (${i % 2 === 0 ? 'alone first' : 'beside first'}): p50 / p99 alone → beside | ${fmt(p.alone.p50, 2)} / ${fmt(p.alone.p99, 2)} → ${fmt(p.beside.p50, 2)} / ${fmt(p.beside.p99, 2)} ms (p99 ${pct(p99Ratios[i]!)}); gateway CPU a lookup ${fmt(p.alone.cpuUs)} → ${fmt(p.beside.cpuUs)} µs |`,
    );
  console.log(
    `| other keys' p99 beside the readers / alone, median of ${pairs.length} pairs | ${fmt(median(p99Ratios), 3)} (${pct(median(p99Ratios))}; p50 ${pct(median(p50Ratios))}; ${failed} failed) |`,
  );
  const cpuRatios = pairs.map((p) => p.beside.cpuUs / p.alone.cpuUs);
  console.log(`| gateway CPU a lookup beside the readers / alone, median | ${fmt(median(cpuRatios), 3)} (${pct(median(cpuRatios))}) |`);
  console.log(`| a last set of readers all cut after | ${fmt(cutAfter, 1)} s (${cuts} idle cuts in the run) |`);
} finally {
  for (const s of sockets) s.destroy();
  inspector?.close();
  gateway?.kill('SIGTERM');
  await rm(work, { recursive: true, force: true });
}
