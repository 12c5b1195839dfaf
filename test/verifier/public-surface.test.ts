/**
 * The verifier package's public surface is deliberate: its `exports` map names one entry point
 * (and package.json), which exports exactly the names below, each listed in the package README and
 * exercised by the suite. What the service shares with it (the private shared package) is reached
 * only inside the package, never by a subpath. Something new made public fails here until it is
 * added on purpose, with the README.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';

const manifest = JSON.parse(readFileSync(join(ROOT, 'packages/verifier/package.json'), 'utf8')) as { exports: Record<string, unknown> };

const SURFACE: Record<string, string[]> = {
  '@merchant-verify/verifier': [
    'BUNDLE_SCHEMA_SUFFIX',
    'bucketBitsFor',
    'bucketHex',
    'bucketOf',
    'recordMatchesEntry',
    'CanonicalizationError',
    'InvalidArgumentError',
    'FetchFailedError',
    'InvalidKeySetError',
    'InvalidVerifierKeyError',
    'KEY_SET_PATH',
    'LOG_KEY_PATH',
    'MvrError',
    'NoteError',
    'PolicyError',
    'VERIFIER_ERROR_CODES',
    'ageOf',
    'gatewaySource',
    'isNeverAudited',
    'parseKeySet',
    'parsePolicy',
    'stalenessOf',
    'trustedKeySet',
    'verdictOf',
    'verifyAbsence',
    'verifyAnswer',
    'verifyBundle',
    'verifyCompactAnswer',
    'verifyLogProof',
    'verifyOnline',
    'verifyOnlineCompact',
    'verifyRecord',
    'verifyWitnessedCheckpoint',
  ],
};

describe('the public surface of @merchant-verify/verifier', () => {
  it('exports names one entry point and package.json, no wildcard, no internal entry', () => {
    expect(Object.keys(manifest.exports)).toEqual(['.', './package.json']);
  });

  it('the former /tlog, /issuer and /internal/* entry points are gone', async () => {
    for (const path of ['tlog', 'issuer', 'internal/tlog', 'internal/issuer']) {
      await expect(import(`@merchant-verify/verifier/${path}`)).rejects.toThrow();
    }
  });

  it.each(Object.entries(SURFACE))('%s exports exactly its listed names', async (specifier, names) => {
    const entry = (await import(specifier)) as Record<string, unknown>;
    expect(Object.keys(entry).sort()).toEqual([...names].sort());
  });

  it('an internal module is not reachable by a subpath', async () => {
    await expect(import('@merchant-verify/verifier/' + 'errors')).rejects.toThrow();
    await expect(import('@merchant-verify/verifier/' + 'shared/index.js')).rejects.toThrow();
    await expect(import('@merchant-verify/verifier/' + 'dist/shared/index.js')).rejects.toThrow();
  });

  it('the package README lists every export, and nothing else, in its entry point table', () => {
    const readme = readFileSync(join(ROOT, 'packages/verifier/README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Entry points')).split('\n\n')[2] ?? '';
    const listed = [...table.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g)].map((m) => m[1]);
    expect([...listed].sort()).toEqual([...SURFACE['@merchant-verify/verifier']!].sort());
  });

  it('each export is imported from the package by a test file besides this one', () => {
    const files = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('public-surface.test.ts'),
    );
    const imported = new Set(
      files.flatMap((f) =>
        [
          ...readFileSync(join(ROOT, 'test', f), 'utf8').matchAll(
            /import \{([^}]*)\} from '(?:@merchant-verify|merchant-verify)\/verifier'/g,
          ),
        ].flatMap((m) => (m[1] ?? '').split(',').map((name) => name.trim())),
      ),
    );
    expect(SURFACE['@merchant-verify/verifier']!.filter((name) => !imported.has(name))).toEqual([]);
  });
});
