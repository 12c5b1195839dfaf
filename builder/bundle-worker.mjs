// `npm run build`, after the compile: the build's workers (dist/builder/worker.js signs,
// dist/builder/index-worker.js writes the index and map) and a mirror's verifying worker
// (dist/mirror/verify-worker.js), each made into one file with everything it imports (zod, tldts, whatwg-url, the verifier package), in place. Every
// build starts its workers afresh, and loading some fifty modules one by one was half of a
// worker's start (about 0.45 s of CPU against 0.23 s bundled, decision 0055). esbuild is a
// development dependency, as the compiler is: nothing bundles at run time. The file stays
// where the dispatcher looks for it; without this step it still runs, unbundled.
import { build } from 'esbuild';

for (const file of ['../dist/builder/worker.js', '../dist/builder/index-worker.js', '../dist/mirror/verify-worker.js']) {
  const worker = new URL(file, import.meta.url).pathname;
  await build({
    entryPoints: [worker],
    outfile: worker,
    allowOverwrite: true,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
}
