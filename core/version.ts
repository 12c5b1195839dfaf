import { readFileSync } from 'node:fs';

/**
 * The package's version, read once from its package.json so the CLI (`--version`) and the MCP
 * server (its `serverInfo`) never drift from what npm publishes. The sources (`core/`) sit one
 * folder below package.json, the compiled files (`dist/core/`) two; the first package.json
 * named merchant-verify wins.
 */
export const PACKAGE_VERSION: string = readVersion();

function readVersion(): string {
  for (const path of ['../package.json', '../../package.json']) {
    let pkg: { name?: unknown; version?: unknown };
    try {
      pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as typeof pkg;
    } catch {
      continue;
    }
    if (pkg.name === 'merchant-verify' && typeof pkg.version === 'string') return pkg.version;
  }
  throw new Error(`merchant-verify: no package.json of merchant-verify above ${new URL('.', import.meta.url).pathname}`);
}
