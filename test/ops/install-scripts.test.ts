/**
 * npm 11 skips a dependency's install script unless package.json's `allowScripts` approves it, and
 * `npm ci` ends with a warning for each one neither approved nor denied. Every package the lockfile
 * marks as having an install script has an entry there, so a clean install prints no such warning
 * and what runs at install is a choice written down, not a default.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';

/** The names of the packages the lockfile says have an install script. */
function packagesWithInstallScripts(): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { hasInstallScript?: boolean; name?: string }>;
  };
  const names = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript === true)
    .map(([path, entry]) => entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  return [...new Set(names)].sort();
}

describe("dependencies' install scripts", () => {
  it('each has an allowScripts entry in package.json (esbuild denied: its binary comes as an optional dependency)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    const covered = Object.keys(pkg.allowScripts ?? {}).map((entry) => entry.replace(/(.)@.*$/, '$1'));
    expect(packagesWithInstallScripts()).toContain('esbuild');
    for (const name of packagesWithInstallScripts()) expect(covered, name).toContain(name);
    expect(pkg.allowScripts?.esbuild).toBe(false);
  });
});
