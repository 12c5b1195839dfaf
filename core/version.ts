import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.ts';

/**
 * The package's folder and version, read once from its package.json so the CLI (`--version`), the
 * MCP server (its `serverInfo`) and `mvr init` (its template files) never drift from what npm
 * publishes. The sources (`core/`) sit one folder below package.json, the compiled files
 * (`dist/core/`) two; the first package.json named merchant-verify wins.
 */
const PACKAGE = findPackage();

/** The package's version, as in its package.json. */
export const PACKAGE_VERSION: string = PACKAGE.version;

/** The package's root folder (a `file:` URL ending in `/`): where package.json and the shipped folders are. */
export const PACKAGE_ROOT: URL = PACKAGE.root;

function findPackage(): { version: string; root: URL } {
  for (const path of ['../', '../../']) {
    const root = new URL(path, import.meta.url);
    let pkg: { name?: unknown; version?: unknown };
    try {
      pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as typeof pkg;
    } catch {
      continue;
    }
    if (pkg.name === 'merchant-verify' && typeof pkg.version === 'string') return { version: pkg.version, root };
  }
  throw new ConfigError(`merchant-verify: no package.json of merchant-verify above ${new URL('.', import.meta.url).pathname}`);
}
