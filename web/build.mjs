// `npm run build`, last step: the verify page for browsers. Its script, with
// @merchant-verify/verifier inside, bundled by esbuild (a development dependency) into
// dist/verify/, beside the page; the gateway serves both, and `mvr build` copies them to public/.
import { copyFile, mkdir } from 'node:fs/promises';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url);
const out = new URL('dist/verify/', root);
await mkdir(out, { recursive: true });
await build({
  entryPoints: [new URL('web/verify/app.ts', root).pathname],
  outfile: new URL('app.js', out).pathname,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  // The domain rule's URL parser expects SharedArrayBuffer, which a page without cross-origin isolation lacks.
  inject: [new URL('web/verify/shared-array-buffer.ts', root).pathname],
  logLevel: 'warning',
});
await copyFile(new URL('web/verify/index.html', root), new URL('index.html', out));
