/**
 * `npm run bench:history [-- --domains N --builds K --calls C]`: the CPU one `GET /v1/history`
 * costs a gateway when every kept build has N domains (1M and 13 builds by default), measured on
 * the service the route calls (`BuildHistory.history`), over a real records folder.
 *
 * The kept builds are real `mvr build --keep` runs of the sample audits (a few records each,
 * signed), whose domain maps are then grown to N leaves: random hashes stand for the hashes of
 * N domains, merged with the real ones, and the build statement is signed again over the grown
 * map (and packs and a pack index to match: each added leaf a one-byte line) with the project's
 * key. So every map a gateway reads is as large and as signed as a real build's, while no one
 * signs 13M records: history reads a build's map and the one record it asks for, never the others. Each call is measured in a fresh process after one unmeasured
 * call (the first fills whatever the gateway keeps), so what is shown is the steady state a
 * flood of history calls meets, beside the first call's cost.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { domainHash, ENTRY_SIZE, type PacksHead, packPath, recordsPerPackFor, splitPack } from '#shared';
import { runBuild } from '../builder/build.ts';
import { writeDomainMap } from '../builder/domain-map.ts';
import { sha256 as sha256Of } from '../core/crypto/hash.ts';
import { BUILD_STATEMENT_FILE, BUILDS_DIR, DOMAIN_MAP_FILE, MANIFEST_FILE, PACK_INDEX_FILE } from '../core/layout.ts';
import { parseManifest } from '../core/schemas/manifest.ts';
import { keygen, loadActiveKey } from '../keyring/signing-keys.ts';
import { openRecordsStack } from '../service/records-stack.ts';

const ISSUER = 'merchant-verify.example';
const DOMAIN = 'acme-outdoor.example';
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** CPU seconds (user + system) spent by `f`. */
async function cpuOf(f: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await f();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1e6;
}

/** In a fresh process: one history call unmeasured, then `calls` measured. */
async function measure(root: string, calls: number): Promise<void> {
  const stack = await openRecordsStack({
    store: { url: join(root, 'records'), publicDir: join(root, 'public') },
    issuer: ISSUER,
    schemaUrl: `https://${ISSUER}/schemas/verification/v1`,
    cacheBytes: 16 * 1024 * 1024,
  });
  try {
    let entries = 0;
    const first = await cpuOf(async () => (entries = (await stack.history.history(DOMAIN)).entries.length));
    const each: number[] = [];
    for (let i = 0; i < calls; i++) each.push(await cpuOf(() => stack.history.history(DOMAIN)));
    const mean = each.reduce((a, b) => a + b, 0) / each.length;
    console.log(JSON.stringify({ entries, first, mean, max: Math.max(...each) }));
  } finally {
    await stack.close();
  }
}

/**
 * Grows a build's map to `n` leaves (its real leaves among them) with packs and a pack index to
 * match (each added leaf a one-byte line, the real records where they fall), and signs its
 * statement again over them.
 */
async function grow(root: string, id: string, n: number): Promise<void> {
  const dir = join(root, 'records', BUILDS_DIR, id);
  const real = await readFile(join(dir, DOMAIN_MAP_FILE));
  // v2 leaves: the real records' entries, and random ones (of the one-byte lines) ordered by their first 32 bytes.
  const entries: Buffer[] = [];
  for (let i = 0; i < real.length; i += ENTRY_SIZE) entries.push(real.subarray(i, i + ENTRY_SIZE));
  for (let i = entries.length; i < n; i++) entries.push(randomBytes(ENTRY_SIZE));
  entries.sort((a, b) => Buffer.compare(a.subarray(0, 32), b.subarray(0, 32)));
  const records = new Map<string, Uint8Array>();
  const statement = JSON.parse(await readFile(join(dir, BUILD_STATEMENT_FILE), 'utf8')) as { packs: PacksHead };
  for (const { sha256 } of statement.packs.files) {
    for (const record of splitPack(await readFile(join(dir, packPath(sha256)))) as Uint8Array[]) {
      const { domain } = JSON.parse(Buffer.from(record).toString('utf8')) as { domain: string };
      records.set(Buffer.from(domainHash(sha256Of, domain)).toString('hex'), record);
    }
  }
  const perPack = recordsPerPackFor(n);
  const index = Buffer.alloc(n * 4);
  const files: PacksHead['files'] = [];
  for (let start = 0; start < n; start += perPack) {
    const lines = entries
      .slice(start, start + perPack)
      .map((e) => Buffer.concat([records.get(e.subarray(0, 32).toString('hex')) ?? Buffer.alloc(0), NEWLINE]));
    let end = 0;
    for (const [i, line] of lines.entries()) index.writeUInt32BE((end += line.length), (start + i) * 4);
    const pack = Buffer.concat(lines);
    const sha256 = createHash('sha256').update(pack).digest('hex');
    await writeFile(join(dir, packPath(sha256)), pack);
    files.push({ sha256, bytes: pack.length });
  }
  await writeFile(join(dir, PACK_INDEX_FILE), index);
  const manifest = parseManifest(await readFile(join(dir, MANIFEST_FILE)), id);
  const key = await loadActiveKey(join(root, 'keys'), undefined);
  const packs = { records_per_pack: perPack, files };
  await writeDomainMap(dir, Buffer.concat(entries), { issuer: ISSUER, build: id, issuedAt: manifest.issued_at, key, packs });
}
const NEWLINE = Buffer.from('\n');

const { values } = parseArgs({
  options: {
    domains: { type: 'string', default: '1000000' },
    builds: { type: 'string', default: '13' },
    calls: { type: 'string', default: '3' },
    measure: { type: 'string' },
  },
});
if (values.measure) {
  await measure(values.measure, Number(values.calls));
} else {
  const [n, builds, calls] = [Number(values.domains), Number(values.builds), Number(values.calls)];
  const root = join(tmpdir(), `mvr-bench-history-${process.pid}`);
  try {
    const dirs = { auditsDir: join(root, 'audits'), recordsDir: join(root, 'records'), publicDir: join(root, 'public') };
    await mkdir(join(root, 'keys'), { recursive: true });
    await keygen(join(root, 'keys'));
    await cp(new URL('../audits', import.meta.url), dirs.auditsDir, { recursive: true });
    let started = performance.now();
    for (let month = 0; month < builds; month++) {
      await runBuild({
        ...dirs,
        keysDir: join(root, 'keys'),
        issuer: ISSUER,
        schemaUrl: `https://${ISSUER}/schemas/verification/v1`,
        now: Date.UTC(2026, 11 + month, 1),
        signingKey: undefined,
        workers: 1,
        keep: builds,
      });
    }
    const ids = (await readdir(join(root, 'records', BUILDS_DIR))).filter((d) => !d.startsWith('.'));
    for (const id of ids) await grow(root, id, n);
    console.error(`${ids.length} kept builds of ${fmt(n)} domains made in ${fmt((performance.now() - started) / 1000, 1)} s`);
    started = performance.now();
    const child = spawnSync(process.execPath, [...process.execArgv, import.meta.filename, '--measure', root, '--calls', String(calls)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (child.status !== 0) throw new Error(`the measuring process exited ${child.status}`);
    const r = JSON.parse(child.stdout) as { entries: number; first: number; mean: number; max: number };
    console.log('| domains a build | kept builds | entries | first call CPU s | CPU s a call after it (mean of C) | max |');
    console.log('|---:|---:|---:|---:|---:|---:|');
    console.log(`| ${fmt(n)} | ${ids.length} | ${r.entries} | ${fmt(r.first, 3)} | ${fmt(r.mean, 3)} (C = ${calls}) | ${fmt(r.max, 3)} |`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
