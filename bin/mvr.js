#!/usr/bin/env node
// The package's bin: the CLI compiled to JavaScript in dist/ (`npm run build`; `npm install`
// runs it in a checkout, and the published package carries it).
try {
  await import('../dist/cli/cli.js');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/cli/cli.js')) throw error;
  console.error('mvr: dist/cli/cli.js is missing: run `npm run build` in this checkout first');
  process.exitCode = 2;
}
