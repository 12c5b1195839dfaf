/**
 * `npm run bench:batch`: a batch of 100 domains (`POST /v1/verify/batch`) against 100 single
 * lookups (`GET /v1/verify`), both on keep-alive connections, against the same gateway, in one
 * run, rounds alternating. The figure is domains answered per second.
 *
 * Usage: npm run bench:batch -- --records 10000 --seconds 5 --rounds 3 --connections 16
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { auditsFile } from './build.ts';
import { assertPortsFree, domainsOf, ensureTools, pathsScript, startGatewayProcess, wrk } from './gateway.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    hot: { type: 'string', default: '1000' },
  },
});
const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'bench/out');
const count = Number(values.records),
  seconds = Number(values.seconds),
  rounds = Number(values.rounds),
  connections = Number(values.connections);
const log = (s: string) => process.stderr.write(`bench:batch: ${s}\n`);
const mvr = (...args: string[]) => run(process.execPath, [join(ROOT, 'bin/mvr.js'), ...args], { maxBuffer: 1 << 26 });

await ensureTools();
const audits = await auditsFile(OUT, count);
const work = join(OUT, `batch-${count}`);
if (!existsSync(join(work, 'records/current'))) {
  log(`building ${count.toLocaleString('en-US')} records`);
  await mvr('keygen', '--keys', join(work, 'keys'));
  await mvr(
    'build',
    '--json',
    '--audits',
    audits,
    '--records',
    join(work, 'records'),
    '--public',
    join(work, 'public'),
    '--keys',
    join(work, 'keys'),
    '--now',
    '2026-11-01T00:00:00Z',
  );
}
const key = (await mvr('apikey', 'create', '--api-keys', join(work, 'api-keys.json'), '--label', 'bench:batch')).stdout.trim();
const hot = await domainsOf(join(audits, 'audits.jsonl'), Number(values.hot));

const single = await pathsScript(
  work,
  'batch-single',
  hot.map((d) => `/v1/verify?domain=${d}`),
  `Bearer ${key}`,
);
// Every batch body is 100 domains of the same hot set, picked at random per request.
const batch = join(work, 'batch-100.lua');
await writeFile(
  batch,
  `local domains = {}
for line in io.lines("${join(work, 'batch-single.paths')}") do domains[#domains + 1] = string.sub(line, 19) end
math.randomseed(42)
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer ${key}"
wrk.headers["Content-Type"] = "application/json"
request = function()
  local picked = {}
  for i = 1, 100 do picked[i] = '"' .. domains[math.random(#domains)] .. '"' end
  return wrk.format("POST", "/v1/verify/batch", nil, '{"domains":[' .. table.concat(picked, ",") .. ']}')
end
`,
);

const port = 18990;
await assertPortsFree([port]);
let gateway: ChildProcess | null = null;
try {
  gateway = await startGatewayProcess(
    ['--records', join(work, 'records'), '--public', join(work, 'public'), '--api-keys', join(work, 'api-keys.json'), '--rate-limit', '0'],
    port,
  );
  const url = `http://127.0.0.1:${port}`;
  await wrk(url, single, 2, connections);
  await wrk(url, batch, 2, connections);
  const rows: { single: number; batch: number; singleP99: number; batchP99: number }[] = [];
  for (let r = 0; r < rounds; r++) {
    const s = await wrk(url, single, seconds, connections);
    const b = await wrk(url, batch, seconds, connections);
    if (s.non2xx || b.non2xx) throw new Error(`non-2xx answers: single ${s.non2xx}, batch ${b.non2xx}`);
    rows.push({ single: s.requestsPerSecond, batch: b.requestsPerSecond * 100, singleP99: s.p99ms, batchP99: b.p99ms });
    log(
      `round ${r + 1}: single ${Math.round(s.requestsPerSecond)} domains/s, batch ${Math.round(b.requestsPerSecond * 100)} domains/s (${Math.round(b.requestsPerSecond)} batches/s)`,
    );
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const s = median(rows.map((r) => r.single)),
    b = median(rows.map((r) => r.batch));
  process.stdout.write(
    [
      `| ${count.toLocaleString('en-US')} records, hot set ${hot.length}, ${connections} connections, ${seconds} s, median of ${rounds} | domains/s | p99 ms (per request) | x single |`,
      '|---|---:|---:|---:|',
      `| 100 single lookups (GET /v1/verify) | ${Math.round(s).toLocaleString('en-US')} | ${median(rows.map((r) => r.singleP99))} | 1.00 |`,
      `| batches of 100 (POST /v1/verify/batch) | ${Math.round(b).toLocaleString('en-US')} | ${median(rows.map((r) => r.batchP99))} | ${(b / s).toFixed(2)} |`,
      '',
    ].join('\n'),
  );
} finally {
  gateway?.kill('SIGTERM');
}
