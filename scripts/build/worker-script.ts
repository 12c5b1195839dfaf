import { mkdir, rename } from 'node:fs/promises';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX_ENTRY = new URL('./worker-entry.mjs', import.meta.url);

/**
 * The file each build worker runs. Loading TypeScript through tsx costs every worker thread
 * about 40 MB more than plain JavaScript (its own loader thread and transform caches), so the
 * worker's sources are bundled once per build with esbuild (packages stay external) into
 * `node_modules/.cache/merchant-verify/`. Where that cannot be written (a read-only install),
 * workers load the TypeScript through tsx instead: slower to start, same results.
 */
export async function buildWorkerScript(): Promise<URL> {
  try {
    const { build } = await import('esbuild');
    const dir = join(ROOT, 'node_modules/.cache/merchant-verify');
    await mkdir(dir, { recursive: true });
    const out = join(dir, 'build-worker.mjs');
    const tmp = `${out}.${process.pid}.tmp`;
    await build({
      entryPoints: [join(ROOT, 'scripts/build/worker.ts')],
      outfile: tmp,
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'silent',
    });
    // Renamed into place: two builds compiling at once never run a half-written file.
    await rename(tmp, out);
    return new URL(`file://${out}`);
  } catch {
    return TSX_ENTRY;
  }
}
