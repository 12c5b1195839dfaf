// `npm run build`, after the declarations: the verifier's JavaScript as one ES module,
// dist/index.js, with the shared package's code it runs inside and nothing else of it (esbuild
// drops what the entry point never reaches: the issuer's writers, packs, proofs to serve). The
// declarations stay tsc's (dist/*.d.ts, dist/shared/*.d.ts through the package's `#shared`
// import). The three runtime dependencies stay imports. esbuild is a development dependency.
import { build } from 'esbuild';

const here = new URL('.', import.meta.url).pathname;
await build({
  entryPoints: [`${here}src/index.ts`],
  outfile: `${here}dist/index.js`,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  conditions: ['mvr-source'],
  external: ['@noble/ed25519', '@noble/hashes', '@noble/hashes/*', 'canonicalize'],
  logLevel: 'warning',
});
