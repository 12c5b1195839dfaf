/**
 * The verifier entry (`merchant-verify/verifier`) must run unchanged in browsers and edge
 * runtimes: it bundles with esbuild for the browser platform, its import graph holds no `node:`
 * module and none of the server-side dependencies, and the bundle alone verifies a real record.
 */

import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateJwk, loadSigningKey, signRecord } from '../../core/crypto/signing.ts';
import { unverifiedRecord } from '../../core/rules/record.ts';
import { cleanup } from '../support/gateway.ts';
import { ISSUER, NOW_ISO, ROOT, SCHEMA_URL, tempDir } from '../support/project.ts';

const ENTRY = join(ROOT, 'packages', 'verifier', 'src', 'index.ts');
/** Where the verifier's `#shared` leads (its package.json imports, under the source condition). */
const SHARED_ENTRY = join(ROOT, 'packages', 'shared', 'src', 'index.ts');
const FORBIDDEN = ['h3', 'listhen', 'undici', 'fast-glob', 'zod', 'tldts', '@modelcontextprotocol/sdk', 'citty', 'tsx'];

afterAll(cleanup);

/** Import specifiers of a TypeScript/JavaScript source, comments removed first (the JSDoc has an example import). */
function specifiers(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[^'";]*?\sfrom\s*['"]([^'"]+)['"]/g, // import x from 'a' / export { x } from 'a'
    /\bimport\s*['"]([^'"]+)['"]/g, // import 'a'
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, // import('a')
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g, // require('a')
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) out.push(m[1]!);
  return out;
}

/** Walks the project-local import graph from `entry`: every local file, and every bare specifier it reaches. */
async function importGraph(entry: string): Promise<{ files: string[]; bare: Map<string, string[]> }> {
  const files = new Set<string>();
  const bare = new Map<string, string[]>();
  const visit = async (file: string): Promise<void> => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of specifiers(await readFile(file, 'utf8'))) {
      if (spec.startsWith('.') || spec.startsWith('/')) await visit(resolve(dirname(file), spec));
      else if (spec === '#shared') await visit(SHARED_ENTRY);
      else bare.set(spec, [...(bare.get(spec) ?? []), relative(ROOT, file)]);
    }
  };
  await visit(entry);
  return { files: [...files].map((f) => relative(ROOT, f)).sort(), bare };
}

const packageOf = (spec: string) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);

describe('verifier portability', () => {
  let graph: Awaited<ReturnType<typeof importGraph>>;
  beforeAll(async () => {
    graph = await importGraph(ENTRY);
  });

  it('the regex walk finds imports in every form (self-check)', () => {
    const sample = [
      "/** @example import { x } from 'commented-out'; */",
      "// import y from 'also-commented'",
      "import a from 'pkg-a';",
      "import { b,\n  c } from './local.ts';",
      "import type { T } from 'pkg-t';",
      "export { d } from '@scope/pkg-d/sub.js';",
      "import 'side-effect';",
      "const m = await import('dyn');",
    ].join('\n');
    expect(specifiers(sample).sort()).toEqual(['./local.ts', '@scope/pkg-d/sub.js', 'dyn', 'pkg-a', 'pkg-t', 'side-effect'].sort());
  });

  it('the import graph of the verifier package source (with the shared package it ships) holds no node: module and no server-side dependency', () => {
    expect(graph.files).toContain('packages/verifier/src/index.ts');
    expect(graph.files).toContain('packages/shared/src/verify.ts');
    expect(
      graph.files.every((f) => f.startsWith('packages/verifier/src/') || f.startsWith('packages/shared/src/')),
      'files outside the package',
    ).toBe(true);
    const nodeImports = [...graph.bare].filter(([spec]) => spec.startsWith('node:'));
    expect(nodeImports, 'node: imports').toEqual([]);
    const forbidden = [...graph.bare].filter(([spec]) => FORBIDDEN.includes(packageOf(spec)));
    expect(forbidden, 'server-side packages').toEqual([]);
    // Also no Node builtin by its bare name (crypto, fs, path, buffer...).
    const builtins = new Set([
      'crypto',
      'fs',
      'path',
      'os',
      'url',
      'buffer',
      'util',
      'stream',
      'http',
      'https',
      'net',
      'child_process',
      'worker_threads',
      'zlib',
    ]);
    expect([...graph.bare.keys()].filter((s) => builtins.has(packageOf(s)))).toEqual([]);
    // What remains are the portable crypto and canonical-JSON packages.
    expect(new Set([...graph.bare.keys()].map(packageOf))).toEqual(new Set(['@noble/ed25519', '@noble/hashes', 'canonicalize']));
  });

  it('bundles with esbuild for the browser, ESM, and the bundle alone verifies a real signed record', async () => {
    const result = await build({
      entryPoints: [ENTRY],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'esm',
      metafile: true,
      conditions: ['mvr-source'],
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    expect(result.outputFiles).toHaveLength(1);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((i) => i.startsWith('node:'))).toEqual([]);
    for (const pkg of FORBIDDEN)
      expect(
        inputs.filter((i) => i.includes(`node_modules/${pkg}/`)),
        pkg,
      ).toEqual([]);

    const file = join(await tempDir(), 'verifier.bundle.mjs');
    await writeFile(file, result.outputFiles[0]!.text);
    const bundled = (await import(pathToFileURL(file).href)) as typeof import('@merchant-verify/verifier');
    const key = loadSigningKey(generatePrivateJwk());
    const record = signRecord(unverifiedRecord('bundle-check.example', { issuer: ISSUER, schemaUrl: SCHEMA_URL, issuedAt: NOW_ISO }), key);
    const keySet = { keys: [key.publicJwk] };
    expect(bundled.verifyRecord(record, keySet, { domain: 'bundle-check.example' })).toMatchObject({ valid: true, keyId: key.kid });
    expect(bundled.verifyRecord({ ...record, archetype: 'unknowN' }, keySet)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
    expect(bundled.KEY_SET_PATH).toBe('/.well-known/merchant-verify-keys.json');
  });
});
