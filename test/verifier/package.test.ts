/**
 * @merchant-verify/verifier as its users get it: compiled to JavaScript with declarations,
 * packed with npm, installed into an empty project, then loaded by plain `node` (the Node.js
 * line running this suite: CI runs it on every supported line) and bundled for a browser.
 */
import { build } from 'esbuild';
import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unverifiedRecord } from '../../core/record.ts';
import { generatePrivateJwk, loadSigningKey, signRecord } from '../../core/signing.ts';
import { ISSUER, NOW_ISO, ROOT, SCHEMA_URL, cleanup, tempDir } from './helpers.ts';

const run = promisify(execFile);
const PACKAGE = join(ROOT, 'packages', 'verifier');
const DOMAIN = 'package-check.example';

let app: string;
let packed: { filename: string; files: { path: string }[] };
const key = loadSigningKey(generatePrivateJwk());
const record = signRecord(unverifiedRecord(DOMAIN, { issuer: ISSUER, schemaUrl: SCHEMA_URL, issuedAt: NOW_ISO }), key);
const keySet = { keys: [key.publicJwk] };

beforeAll(async () => {
  const work = await tempDir('mvr-package-test-');
  // Compiled by the project's TypeScript, as `npm pack` users get it.
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(PACKAGE, 'tsconfig.json')]);
  const { stdout } = await run('npm', ['pack', PACKAGE, '--pack-destination', work, '--json', '--silent']);
  packed = (JSON.parse(stdout) as (typeof packed)[])[0]!;
  app = join(work, 'app');
  await run('mkdir', ['-p', app]);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'empty-project', private: true, type: 'module' }));
  await run('npm', ['install', join(work, packed.filename), '--no-audit', '--no-fund', '--prefer-offline', '--silent'], { cwd: app });
  await writeFile(join(app, 'record.json'), JSON.stringify(record));
  await writeFile(join(app, 'keys.json'), JSON.stringify(keySet));
}, 180_000);
afterAll(cleanup);

describe('@merchant-verify/verifier, packed and installed', () => {
  it('ships JavaScript and declarations only, and pulls in at most 3 runtime dependencies', async () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/verifier/index.js', 'dist/verifier/index.d.ts', 'dist/core/verify.js']));
    expect(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);
    const manifest = JSON.parse(await readFile(join(PACKAGE, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies).length).toBeLessThanOrEqual(3);
    const installed = (await readdir(join(app, 'node_modules'), { recursive: true })).filter((p) => /^(@[^/]+\/)?[^/@][^/]*$/.test(p) && !p.startsWith('.') && p !== '@merchant-verify' && p !== '@noble');
    expect(installed.sort()).toEqual(['@merchant-verify/verifier', '@noble/ed25519', '@noble/hashes', 'canonicalize']);
  });

  it(`verifies a real record with plain node ${process.version}, and refuses a tampered and an unsigned one`, async () => {
    const script = `
      import { readFileSync } from 'node:fs';
      import { verifyRecord } from '@merchant-verify/verifier';
      const record = JSON.parse(readFileSync('record.json', 'utf8'));
      const keys = JSON.parse(readFileSync('keys.json', 'utf8'));
      const { key_id, signature, ...unsigned } = record;
      console.log(JSON.stringify([
        verifyRecord(record, keys, { domain: '${DOMAIN}' }),
        verifyRecord({ ...record, score: 99 }, keys),
        verifyRecord(unsigned, keys),
      ].map((r) => ({ valid: r.valid, code: r.code ?? null }))));`;
    await writeFile(join(app, 'check.mjs'), script);
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: app });
    expect(JSON.parse(stdout)).toEqual([
      { valid: true, code: null },
      { valid: false, code: 'BAD_SIGNATURE' },
      { valid: false, code: 'UNSIGNED' },
    ]);
  });

  it('bundles for the browser from the installed package, without node: modules, and the bundle verifies', async () => {
    await writeFile(join(app, 'entry.mjs'), "export { verifyRecord } from '@merchant-verify/verifier';\n");
    const out = join(app, 'bundle.mjs');
    await build({ entryPoints: [join(app, 'entry.mjs')], absWorkingDir: app, bundle: true, platform: 'browser', format: 'esm', outfile: out, logLevel: 'silent' });
    const text = await readFile(out, 'utf8');
    expect(text).not.toMatch(/from\s*["']node:|require\(["']node:/);
    const bundled = (await import(pathToFileURL(out).href)) as { verifyRecord: (r: unknown, k: unknown, o?: unknown) => { valid: boolean; code?: string } };
    expect(bundled.verifyRecord(record, keySet, { domain: DOMAIN })).toMatchObject({ valid: true });
    expect(bundled.verifyRecord({ ...record, domain: 'other.example' }, keySet)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
  });
});
