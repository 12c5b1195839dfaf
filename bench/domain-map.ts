/**
 * `npm run bench:map`: what the live domain map costs a gateway at 1M domains (and 100k), as the
 * gateway loads it (`loadBuildMap`: the statement verified, the leaves checked and hashed to the
 * signed root): memory held, seconds to load, and lookups and proofs per second.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { domainHash, ENTRY_SIZE, packCount, recordsPerPackFor } from '#shared';
import { writeDomainMap } from '../builder/domain-map.ts';
import { sha256 } from '../core/crypto/hash.ts';
import { generatePrivateJwk, loadSigningKey } from '../core/crypto/signing.ts';
import { absenceProof, hasRecord, loadBuildMap } from '../service/build-maps.ts';

const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const mb = (bytes: number) => fmt(bytes / 1024 / 1024, 1);

/** In a fresh process: load the map written in `dir` and report what it holds and costs. */
async function measure(dir: string, n: number, publicJwk: unknown): Promise<void> {
  globalThis.gc?.();
  const before = process.memoryUsage();
  const started = performance.now();
  const map = await loadBuildMap(
    (name) => readFile(join(dir, name)).catch(() => null),
    { keySet: { keys: [publicJwk as never] }, unsigned: false, untrusted: [] },
    'bench',
    dir,
  );
  const loadSeconds = (performance.now() - started) / 1000;
  globalThis.gc?.();
  const after = process.memoryUsage();
  const domains = Array.from({ length: 100_000 }, (_, i) => `never-${i}.example`);
  let t = performance.now();
  let found = 0;
  for (const d of domains) if (hasRecord(map, d)) found++;
  const lookups = domains.length / ((performance.now() - t) / 1000);
  t = performance.now();
  for (const d of domains.slice(0, 5000)) absenceProof(map, d);
  const proofs = 5000 / ((performance.now() - t) / 1000);
  if (found !== 0 || domainHash(sha256, 'x').length !== 32) throw new Error('random leaves matched a domain');
  const held = after.heapUsed + after.external - before.heapUsed - before.external;
  console.log(
    `| ${fmt(n)} | ${mb(n * ENTRY_SIZE)} | ${fmt(loadSeconds, 2)} | ${mb(held)} | ${mb(after.rss - before.rss)} | ${fmt(lookups)} | ${fmt(proofs)} |`,
  );
}

if (process.argv[2] === '--load') {
  const [dir, n, jwk] = process.argv.slice(3) as [string, string, string];
  await measure(dir, Number(n), JSON.parse(jwk));
} else {
  console.log('| domains | map file MB | load and check s | held MB (heap + external) | RSS growth MB | lookups/s | absence proofs/s |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (const n of [100_000, 1_000_000]) {
    const dir = await mkdtemp(join(tmpdir(), 'mvr-bench-map-'));
    try {
      const key = loadSigningKey(generatePrivateJwk());
      // Leaves as the build writes them (v2 entries): random entries stand for those of n domains, sorted by their domain hash.
      const entries: Buffer[] = [];
      for (let i = 0; i < n; i++) entries.push(randomBytes(ENTRY_SIZE));
      entries.sort((a, b) => Buffer.compare(a.subarray(0, 32), b.subarray(0, 32)));
      // The statement names packs, as every build's does (the gateway refuses one without); they are never read here.
      const perPack = recordsPerPackFor(n);
      const files = Array.from({ length: packCount(n, perPack) }, () => ({ sha256: '0'.repeat(64), bytes: 0 }));
      await writeDomainMap(dir, Buffer.concat(entries), {
        issuer: 'merchant-verify.example',
        build: 'bench',
        issuedAt: '2026-11-01T00:00:00.000Z',
        key,
        packs: { records_per_pack: perPack, files },
      });
      const child = spawnSync(
        process.execPath,
        [...process.execArgv, import.meta.filename, '--load', dir, String(n), JSON.stringify(key.publicJwk)],
        { stdio: 'inherit' },
      );
      if (child.status !== 0) throw new Error(`the measuring process exited ${child.status}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
