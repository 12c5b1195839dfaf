import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The file system's rate of creating small files the way the build does (one `O_EXCL` create
 * and write per record into 256 shard folders). On the machines measured here it does not grow
 * with threads, so it bounds the build as much as Ed25519 does.
 */
export function measureFileCreation(dir: string, count = 20_000): number {
  // A fresh folder each time; the caller retires the files afterwards (see bench/build.ts retire()).
  for (let i = 0; i < 256; i++) mkdirSync(join(dir, i.toString(16).padStart(2, '0')), { recursive: true });
  const data = 'x'.repeat(750);
  const started = performance.now();
  for (let i = 0; i < count; i++)
    writeFileSync(join(dir, (i % 256).toString(16).padStart(2, '0'), `m${i}.example.json`), data, { flag: 'wx' });
  return count / ((performance.now() - started) / 1000);
}
