/**
 * `npm run bench:mirror -- --project DIR [--source s3|gateway]`: `mvr mirror` of a built project's live
 * build into an empty folder: time, bytes, records verified per second, peak RSS; then the same command again
 * (the build live already: nothing fetched). Beside it, in the same run, raw Ed25519: node:crypto
 * verifying record-sized messages on one core, the floor of the mirror's record checks.
 *
 * The source is the local S3-compatible server the tests use (s3rver behind a Signature V4 check, in this
 * process), filled by `mvr publish` as a user fills it; or, with `--source gateway`, `mvr serve` over DIR's
 * records in a process of its own with an API key of the mirror scope, its CPU time reported beside the
 * mirror's (a source on the same machine takes its share of the two cores). The mirror's CPU is also split by
 * thread (sampled from /proc), and set against the CPU a raw verification takes: on a loaded machine rates
 * measure the other work as much as the mirror, CPU time does not. DIR is read, never written: a
 * project holding `records/` and `public/` (`mvr build` of synthetic audits, bench/generate-audits.ts).
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readlink, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { CURRENT_LINK } from '../core/layout.ts';
import { freePort } from '../test/support/ports.ts';
import { startS3 } from '../test/support/s3-server.ts';
import { cpuSecondsOf, threadCpuSecondsOf } from './cpu-per-request.ts';
import { startGatewayProcess } from './gateway.ts';

const { values } = parseArgs({ options: { project: { type: 'string' }, source: { type: 'string', default: 's3' } } });
if (!values.project) throw new Error('--project DIR is required: a project folder with records/ and public/ (see the comment above)');
if (values.source !== 's3' && values.source !== 'gateway') throw new Error(`--source ${values.source}: s3 or gateway`);
const project = resolve(values.project);
const ROOT = resolve(import.meta.dirname, '..');
const BUCKET = 'mvr-bench-mirror';
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** Raw Ed25519 on one core, node:crypto over messages of a record's size: verifications a second, and the CPU seconds one takes (this process does nothing else meanwhile). */
function rawEd25519(n = 20_000): { perSecond: number; cpuSeconds: number } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const message = Buffer.alloc(700, 7);
  const signature = sign(null, message, privateKey);
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) if (!verify(null, message, publicKey, signature)) throw new Error('raw verify failed');
  const used = process.cpuUsage(cpu);
  return { perSecond: n / ((performance.now() - started) / 1000), cpuSeconds: (used.user + used.system) / 1e6 / n };
}

/**
 * The CPU seconds of each thread of the process `/usr/bin/time` (`timePid`) runs, by thread id, sampled every
 * 100 ms until `stop` (a thread's last tenth of a second may be missed), and the process's id.
 */
function sampleThreads(timePid: number): { stop: () => { pid: number; threads: Map<number, number> } } {
  let pid = 0;
  const threads = new Map<number, number>();
  const sample = () => {
    if (pid === 0) pid = Number(readFileSync(`/proc/${timePid}/task/${timePid}/children`, 'utf8').trim().split(' ')[0]) || 0;
    if (pid !== 0) for (const [tid, cpu] of threadCpuSecondsOf(pid)) threads.set(tid, cpu);
  };
  const timer = setInterval(() => {
    try {
      sample();
    } catch {
      // /usr/bin/time has exited: the last sample stands.
    }
  }, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return { pid, threads };
    },
  };
}

/** Where the mirror reads from: its `--from`, the environment it needs, and the source's own CPU seconds when it runs apart. */
interface Source {
  from: string;
  env: NodeJS.ProcessEnv;
  cpuSeconds(): number | undefined;
  close(): Promise<void>;
}

async function bucketSource(records: string): Promise<Source> {
  const s3 = await startS3([BUCKET]);
  const env = { ...process.env, ...s3.env, MVR_PROGRESS_MS: '600000' };
  const filled = performance.now();
  const published = await promisify(execFile)(
    process.execPath,
    [
      join(ROOT, 'bin/mvr.js'),
      'publish',
      '--records',
      records,
      '--public',
      join(project, 'public'),
      '--to',
      `s3://${BUCKET}/prod`,
      '--json',
    ],
    { env, encoding: 'utf8', maxBuffer: 64 * 1024 ** 2 },
  );
  const { objects } = JSON.parse(published.stdout) as { objects: number };
  console.log(`bucket filled by mvr publish: ${fmt(objects)} objects in ${fmt((performance.now() - filled) / 1000, 1)} s`);
  // The S3 server runs in this process: its share of the CPU is not told apart from the benchmark's own.
  return { from: `s3://${BUCKET}/prod`, env, cpuSeconds: () => undefined, close: () => s3.close() };
}

async function gatewaySource(records: string, work: string): Promise<Source> {
  const apiKeys = join(work, 'api-keys.json');
  const created = await promisify(execFile)(
    process.execPath,
    [
      join(ROOT, 'bin/mvr.js'),
      'apikey',
      'create',
      '--keys',
      work,
      '--api-keys',
      apiKeys,
      '--label',
      'bench mirror',
      '--scope',
      'mirror',
      '--json',
    ],
    { encoding: 'utf8' },
  );
  const { key } = JSON.parse(created.stdout) as { key: string };
  const port = await freePort();
  const gateway = await startGatewayProcess(
    ['--records', records, '--public', join(project, 'public'), '--api-keys', apiKeys, '--rate-limit', '0', '--metrics-port', '0'],
    port,
  );
  const started = cpuSecondsOf(gateway.pid!);
  console.log(`source: mvr serve on port ${port} (pid ${gateway.pid}), an API key of the mirror scope`);
  return {
    from: `http://127.0.0.1:${port}`,
    env: { ...process.env, MVR_API_KEY: key, MVR_PROGRESS_MS: '600000' },
    cpuSeconds: () => cpuSecondsOf(gateway.pid!) - started,
    close: async () => {
      gateway.kill();
    },
  };
}

const to = await mkdtemp(join(tmpdir(), 'mvr-bench-mirror-'));
const records = join(project, 'records');
const source = values.source === 'gateway' ? await gatewaySource(records, to) : await bucketSource(records);
try {
  const id = (await readlink(join(records, CURRENT_LINK))).split('/').pop()!;
  const env = source.env;
  const rawRun = rawEd25519();
  const raw = rawRun.perSecond;
  const mirror = async () => {
    const started = performance.now();
    const running = promisify(execFile)(
      '/usr/bin/time',
      [
        '-f',
        '%M %U %S',
        process.execPath,
        join(ROOT, 'bin/mvr.js'),
        'mirror',
        '--from',
        source.from,
        '--to',
        join(to, 'mirror'),
        '--trusted-keys',
        join(project, 'public', KEY_SET_PATH),
        '--json',
      ],
      { env, encoding: 'utf8', maxBuffer: 64 * 1024 ** 2 },
    );
    const sampling = sampleThreads(running.child.pid!);
    const run = await running;
    const { pid, threads } = sampling.stop();
    const seconds = (performance.now() - started) / 1000;
    const [maxKb, user, system] = run.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
    return {
      seconds,
      rssMb: maxKb! / 1024,
      cpuSeconds: user! + system!,
      pid,
      threads,
      summary: JSON.parse(run.stdout) as {
        records: number;
        packs_fetched: number;
        bytes: number;
        seconds: number;
        records_verified: number;
        unchanged: boolean;
      },
    };
  };
  const first = await mirror();
  const sourceCpu = source.cpuSeconds();
  const again = await mirror();
  const s = first.summary;
  console.log(
    `mirror of build ${id}: ${fmt(s.records)} records, ${s.packs_fetched} packs, ${fmt(s.bytes / 1e6, 1)} MB in ${fmt(first.seconds, 1)} s ` +
      `(${fmt(s.bytes / 1e6 / first.seconds, 1)} MB/s; the command's own ${fmt(s.seconds, 1)} s), ${fmt(s.records_verified / first.seconds)} records verified/s, ` +
      `peak RSS ${fmt(first.rssMb)} MB`,
  );
  console.log(`raw Ed25519 (node:crypto, one core, 700-byte messages): ${fmt(raw)} verifications/s`);
  // The target: every core verifying, at least 1.3 times one core's raw rate (a source on this machine takes its share).
  const ratio = s.records_verified / first.seconds / raw;
  console.log(
    `the mirror: ${fmt(ratio, 2)} x one core's raw verify (target >= 1.3${ratio < 1.3 ? ': PAST TARGET' : ''}); ` +
      `CPU ${fmt((1e6 * first.cpuSeconds) / s.records_verified)} us a record against ${fmt(1e6 * rawRun.cpuSeconds)} us of CPU a raw verification`,
  );
  // By thread: the main one, the verifying workers (one a core: the busiest of the rest), and V8's and libuv's.
  const us = (cpu: number) => `${fmt((1e6 * cpu) / s.records_verified)} us`;
  const others = [...first.threads]
    .filter(([tid]) => tid !== first.pid)
    .map(([, cpu]) => cpu)
    .sort((a, b) => b - a);
  const workers = others.slice(0, availableParallelism());
  const rest = others.slice(workers.length).reduce((a, b) => a + b, 0);
  console.log(
    `CPU a record by thread: main ${us(first.threads.get(first.pid) ?? 0)}, verifying workers ${workers.map(us).join(' + ')}, ` +
      `V8 and libuv threads ${us(rest)}; raw verify's CPU ${fmt(1e6 * rawRun.cpuSeconds)} us a verification`,
  );
  // What a quiet machine would give, from CPU time alone: every core busy with the mirror and its source, against one core's raw verify.
  const rawCpu = rawRun.cpuSeconds * s.records_verified;
  console.log(
    `by CPU: the mirror ${fmt(first.cpuSeconds / rawCpu, 2)} raw verifications a record` +
      (sourceCpu === undefined ? '' : `, with its source ${fmt((first.cpuSeconds + sourceCpu) / rawCpu, 2)}`) +
      `; ${availableParallelism()} free cores would give ${fmt((availableParallelism() * rawCpu) / (first.cpuSeconds + (sourceCpu ?? 0)), 2)} x one core's raw verify`,
  );
  if (sourceCpu !== undefined)
    console.log(
      `the source (mvr serve) used ${fmt(sourceCpu, 1)} s of CPU meanwhile (${fmt((1e6 * sourceCpu) / s.records_verified)} us a record); ` +
        `mirror and source together: ${fmt((first.cpuSeconds + sourceCpu) / first.seconds, 2)} of the machine's cores busy`,
    );
  console.log(
    `again, the build live already: ${fmt(again.seconds, 1)} s, ${again.summary.packs_fetched} packs fetched, unchanged ${again.summary.unchanged}`,
  );
} finally {
  await source.close();
  await rm(to, { recursive: true, force: true });
}
