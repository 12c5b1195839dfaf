/**
 * `npm run bench:log`: what the transparency log costs the build. The same audits are built with
 * and without a log key, rounds alternating, into fresh folders: the build without the log is the
 * reference. Each build with the log starts from the log the previous one left, as the monthly
 * build does, so the later rounds also carry a growing log.
 *
 * Usage: npm run bench:log -- --records 100000 --rounds 2
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { auditsFile, settleDisk } from './build.ts';

const { values } = parseArgs({ options: { records: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '2' } } });
const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'bench/out');
const count = Number(values.records),
  rounds = Number(values.rounds);
const mvr = (...args: string[]) => run(process.execPath, [join(ROOT, 'bin/mvr.js'), ...args], { maxBuffer: 1 << 26 });
const log = (s: string) => process.stderr.write(`bench:log: ${s}\n`);

/** What `mvr build --json` says (snake_case), the members read here. */
interface Summary {
  duration_ms: number;
  peak_rss_mb: number;
  log: { from: number; to: number; tiles: number; bytes: number; duration_ms: number } | null;
}

const audits = await auditsFile(OUT, count);
const work = join(OUT, `log-${count}`);
await rm(work, { recursive: true, force: true });
const keys = join(work, 'keys'),
  logKeys = join(work, 'log-keys');
await mvr('keygen', '--keys', keys);
await cp(keys, logKeys, { recursive: true });
await mvr('keygen', '--log', '--keys', logKeys);
const publicWithLog = join(work, 'public-log');

async function build(withLog: boolean, round: number): Promise<Summary> {
  const records = join(work, `records-${withLog ? 'log' : 'plain'}-${round}`);
  await mkdir(records, { recursive: true });
  await settleDisk();
  const month = `2026-${String(1 + round).padStart(2, '0')}-01T00:00:00Z`;
  const { stdout } = await mvr(
    'build',
    '--json',
    '--audits',
    audits,
    '--records',
    records,
    '--public',
    withLog ? publicWithLog : join(work, `public-${round}`),
    '--keys',
    withLog ? logKeys : keys,
    '--now',
    month,
  );
  // The records are not needed again; the log is (the next round appends to it).
  await rm(records, { recursive: true, force: true });
  return JSON.parse(stdout) as Summary;
}

const rows: { round: number; plain: Summary; logged: Summary }[] = [];
for (let round = 0; round < rounds; round++) {
  log(`round ${round + 1} of ${rounds}: ${count.toLocaleString('en-US')} audits without, then with the log`);
  const plain = await build(false, round);
  const logged = await build(true, round);
  rows.push({ round, plain, logged });
}
const s = (ms: number) => (ms / 1000).toFixed(1);
const lines = [
  `| ${count.toLocaleString('en-US')} audits | build without the log s | with the log s | x without | of which the log step s | log entries | tiles written | log MB | peak RSS MB without / with |`,
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    ({ round, plain, logged }) =>
      `| round ${round + 1} | ${s(plain.duration_ms)} | ${s(logged.duration_ms)} | ${(logged.duration_ms / plain.duration_ms).toFixed(2)} | ${s(logged.log!.duration_ms)} | ${logged.log!.from.toLocaleString('en-US')} -> ${logged.log!.to.toLocaleString('en-US')} | ${logged.log!.tiles} | ${(logged.log!.bytes / 1e6).toFixed(1)} | ${plain.peak_rss_mb} / ${logged.peak_rss_mb} |`,
  ),
];
await writeFile(join(OUT, `log-${count}.json`), JSON.stringify(rows, null, 2));
process.stdout.write(`${lines.join('\n')}\n`);
