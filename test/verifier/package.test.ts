/**
 * Both packages as their users get them: @merchant-verify/verifier and merchant-verify, compiled
 * to JavaScript with declarations (`npm test` compiles them first), packed with npm, installed
 * into empty projects, then loaded by plain `node` (the Node.js line running this suite: CI runs
 * it on every supported line) and bundled for a browser.
 */

import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateJwk, loadSigningKey, signRecord } from '../../core/crypto/signing.ts';
import { unverifiedRecord } from '../../core/rules/record.ts';
import { cleanup } from '../support/gateway.ts';
import { ISSUER, NOW_ISO, ROOT, SCHEMA_URL, tempDir } from '../support/project.ts';

const run = promisify(execFile);
const PACKAGE = join(ROOT, 'packages', 'verifier');
const DOMAIN = 'package-check.example';

interface Packed {
  filename: string;
  files: { path: string }[];
}

let app: string;
let service: string;
let packed: Packed;
let packedService: Packed;
const key = loadSigningKey(generatePrivateJwk());
// A record's shape is not the verifier's business: a verified record built from the never-audited one is enough here.
const record = signRecord(
  { ...unverifiedRecord(DOMAIN, { issuer: ISSUER, schemaUrl: SCHEMA_URL, issuedAt: NOW_ISO }), status: 'verified' },
  key,
);
const keySet = { keys: [key.publicJwk] };

beforeAll(async () => {
  const work = await tempDir('mvr-package-test-');
  // --ignore-scripts: packed as `npm test` compiled them; compiling again here would rewrite
  // dist/ under the other test files' CLI processes.
  // Both packs in one npm run (one npm start, not two), then the two installs side by side.
  const { stdout } = await run('npm', ['pack', PACKAGE, ROOT, '--ignore-scripts', '--pack-destination', work, '--json', '--silent']);
  [packed, packedService] = JSON.parse(stdout) as [Packed, Packed];
  const emptyProject = async (name: string, tarballs: string[]) => {
    const dir = join(work, name);
    await run('mkdir', ['-p', dir]);
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `empty-${name}`, private: true, type: 'module' }));
    await run('npm', ['install', ...tarballs.map((t) => join(work, t)), '--no-audit', '--no-fund', '--prefer-offline', '--silent'], {
      cwd: dir,
    });
    await writeFile(join(dir, 'record.json'), JSON.stringify(record));
    await writeFile(join(dir, 'keys.json'), JSON.stringify(keySet));
    return dir;
  };
  // The service's dependency on the verifier is met by the verifier's tarball, as it would be
  // by the registry once both are published.
  [app, service] = await Promise.all([
    emptyProject('app', [packed.filename]),
    emptyProject('service', [packed.filename, packedService.filename]),
  ]);
}, 300_000);
afterAll(cleanup);

describe('@merchant-verify/verifier, packed and installed', () => {
  it('ships JavaScript and declarations only, and pulls in at most 3 runtime dependencies', async () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'dist/shared/verify.d.ts']),
    );
    // One module of JavaScript, the shared package's code it runs inside; declarations beside it; no issuer entry, no source.
    expect(paths.filter((p) => p.endsWith('.js'))).toEqual(['dist/index.js']);
    expect(paths.filter((p) => p.startsWith('dist/') && !/^dist\/(shared\/)?[\w-]+(\/[\w-]+)?\.(js|d\.ts)$/.test(p))).toEqual([]);
    expect(paths.filter((p) => /internal|issuer/.test(p))).toEqual([]);
    // Nothing written for the issuer runs in it: the writers of proofs, packs, lookups and checkpoints are left out.
    const code = await readFile(join(PACKAGE, 'dist/index.js'), 'utf8');
    for (const writer of [
      'inclusionProof',
      'consistencyProof',
      'packIndexBytes',
      'recordsPerPackFor',
      'lookupAnswerBytes',
      'formatCheckpoint',
    ])
      expect(code, writer).not.toContain(writer);
    expect(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);
    const manifest = JSON.parse(await readFile(join(PACKAGE, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies).length).toBeLessThanOrEqual(3);
    const installed = (await readdir(join(app, 'node_modules'), { recursive: true })).filter(
      (p) => /^(@[^/]+\/)?[^/@][^/]*$/.test(p) && !p.startsWith('.') && p !== '@merchant-verify' && p !== '@noble',
    );
    expect(installed.sort()).toEqual(['@merchant-verify/verifier', '@noble/ed25519', '@noble/hashes', 'canonicalize']);
  });

  it.each([
    ['@merchant-verify/verifier', () => app],
    ['merchant-verify/verifier', () => service],
  ])(`%s verifies a real record with plain node ${process.version}, and refuses a tampered and an unsigned one`, async (specifier, dir) => {
    const script = `
      import { readFileSync } from 'node:fs';
      import { verifyRecord } from '${specifier}';
      const record = JSON.parse(readFileSync('record.json', 'utf8'));
      const keys = JSON.parse(readFileSync('keys.json', 'utf8'));
      const { key_id, signature, ...unsigned } = record;
      console.log(JSON.stringify([
        verifyRecord(record, keys, { domain: '${DOMAIN}' }),
        verifyRecord({ ...record, score: 99 }, keys),
        verifyRecord(unsigned, keys),
      ].map((r) => ({ valid: r.valid, code: r.code ?? null }))));`;
    await writeFile(join(dir(), 'check.mjs'), script);
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: dir() });
    expect(JSON.parse(stdout)).toEqual([
      { valid: true, code: null },
      { valid: false, code: 'BAD_SIGNATURE' },
      { valid: false, code: 'UNSIGNED' },
    ]);
  });

  it("runs the package README's quick start, copied into a new project as a user would, and checks options from plain JavaScript", async () => {
    // The README as installed with the package: its first example after "## Quick start".
    const readme = await readFile(join(app, 'node_modules/@merchant-verify/verifier/README.md'), 'utf8');
    const example = /## Quick start[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("from '@merchant-verify/verifier'");
    await writeFile(join(app, 'quick-start.mjs'), example!);
    const verified = await run(process.execPath, ['quick-start.mjs'], { cwd: app });
    expect(verified.stdout).toBe(`verified: ${DOMAIN}\n`);
    const tampered = join(app, 'tampered');
    await run('mkdir', ['-p', tampered]);
    await writeFile(join(tampered, 'record.json'), JSON.stringify({ ...record, score: 99 }));
    await writeFile(join(tampered, 'keys.json'), JSON.stringify(keySet));
    const refused = await run(process.execPath, [join(app, 'quick-start.mjs')], { cwd: tampered });
    expect(refused.stdout).toBe('not verified: BAD_SIGNATURE\n');
    // Misuse from plain JavaScript is a coded error of the package, never a pass nor a raw TypeError.
    const misuse = `
      import { parsePolicy, verifyLogProof, verifyAnswer, MvrError } from '@merchant-verify/verifier';
      const policy = parsePolicy('quorum none\\n');
      const tries = [
        () => verifyLogProof({}, 'proof', { vkey: 'log+00000000+AA==' }, { policy, maxAgeMs: NaN }),
        () => verifyLogProof({}, 'proof', { vkey: 'log+00000000+AA==' }, { policy, now: new Date('never') }),
        () => verifyAnswer({ answer: {}, keySet: { keys: [] }, log: { proof: 'proof' } }),
      ];
      console.log(JSON.stringify(tries.map((t) => { try { t(); return 'returned'; } catch (e) { return e instanceof MvrError ? e.code : e.name; } })));`;
    await writeFile(join(app, 'misuse.mjs'), misuse);
    const { stdout } = await run(process.execPath, ['misuse.mjs'], { cwd: app });
    expect(JSON.parse(stdout)).toEqual(['INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT']);
  });

  it('bundles for the browser from the installed package, without node: modules, and the bundle verifies', async () => {
    await writeFile(join(app, 'entry.mjs'), "export { verifyRecord } from '@merchant-verify/verifier';\n");
    const out = join(app, 'bundle.mjs');
    await build({
      entryPoints: [join(app, 'entry.mjs')],
      absWorkingDir: app,
      bundle: true,
      platform: 'browser',
      format: 'esm',
      outfile: out,
      logLevel: 'silent',
    });
    const text = await readFile(out, 'utf8');
    expect(text).not.toMatch(/from\s*["']node:|require\(["']node:/);
    const bundled = (await import(pathToFileURL(out).href)) as {
      verifyRecord: (r: unknown, k: unknown, o?: unknown) => { valid: boolean; code?: string };
    };
    expect(bundled.verifyRecord(record, keySet, { domain: DOMAIN })).toMatchObject({ valid: true });
    expect(bundled.verifyRecord({ ...record, domain: 'other.example' }, keySet)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
  });
});

describe('merchant-verify, packed and installed', () => {
  it('ships JavaScript, declarations and the bin, and installs no TypeScript loader, compiler or bundler', async () => {
    const paths = packedService.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'server.json',
        'bin/mvr.js',
        'dist/cli/cli.js',
        'dist/builder/worker.js',
        'dist/builder/index-worker.js',
        'dist/clients/exports.d.ts',
      ]),
    );
    expect(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);
    // The service's errors and the one registry ship in the service; the shared package's errors in its compiled copy (dist/shared).
    expect(paths.filter((p) => /(^|\/)(errors|registry)\.js$/.test(p))).toEqual([
      'dist/core/errors/errors.js',
      'dist/core/errors/registry.js',
      'dist/shared/errors.js',
    ]);
    expect(paths.filter((p) => p.startsWith('packages/'))).toEqual([]);
    const installed = await readdir(join(service, 'node_modules'));
    for (const tool of ['tsx', 'typescript', 'esbuild', 'vitest']) expect(installed, tool).not.toContain(tool);
  });

  it('installs the bin, which prints the installed package.json version', async () => {
    const version = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const { stdout } = await run(join(service, 'node_modules/.bin/mvr'), ['--version'], { cwd: service });
    expect(stdout).toBe(`${version}\n`);
  });

  it('re-exports the verifier package itself: one module, not a second copy', async () => {
    const script = `
      import * as fromService from 'merchant-verify/verifier';
      import * as fromPackage from '@merchant-verify/verifier';
      console.log(fromService.verifyRecord === fromPackage.verifyRecord, Object.keys(fromService).sort().join());`;
    await writeFile(join(service, 'same.mjs'), script);
    const { stdout } = await run(process.execPath, ['same.mjs'], { cwd: service });
    expect(stdout.trim()).toBe(
      'true BUNDLE_SCHEMA_SUFFIX,CanonicalizationError,FetchFailedError,InvalidArgumentError,InvalidKeySetError,InvalidVerifierKeyError,KEY_SET_PATH,LOG_KEY_PATH,MvrError,NoteError,PolicyError,VERIFIER_ERROR_CODES,ageOf,bucketBitsFor,bucketHex,bucketOf,gatewaySource,isNeverAudited,parseKeySet,parsePolicy,recordMatchesEntry,stalenessOf,trustedKeySet,verdictOf,verifyAbsence,verifyAnswer,verifyBundle,verifyCompactAnswer,verifyLogProof,verifyOnline,verifyOnlineCompact,verifyRecord,verifyWitnessedCheckpoint',
    );
  });

  it("an error of the verifier's copy of the shared package is an instance of the service's class of that name, and not of another", async () => {
    const script = `
      import { NoteError, InvalidVerifierKeyError, PolicyError } from './node_modules/merchant-verify/dist/shared/errors.js';
      import * as verifier from '@merchant-verify/verifier';
      let thrown;
      try { verifier.verifyLogProof({}, 'c2sp.org/tlog-proof@v1\\n', { vkey: 'not a key' }); } catch (error) { thrown = error; }
      console.log(thrown instanceof verifier.InvalidVerifierKeyError, thrown instanceof InvalidVerifierKeyError, thrown instanceof NoteError, thrown instanceof PolicyError, verifier.NoteError === NoteError);`;
    await writeFile(join(service, 'copies.mjs'), script);
    const { stdout } = await run(process.execPath, ['copies.mjs'], { cwd: service });
    expect(stdout.trim()).toBe('true true true false false');
  });

  it('`mvr init` from the installed package makes a project that its bin builds, signed and logged', async () => {
    const mvr = join(service, 'node_modules/.bin/mvr');
    await run(mvr, ['init', 'my-shop'], { cwd: service });
    const shop = join(service, 'my-shop');
    const built = await run(mvr, ['build', '--json'], { cwd: shop });
    expect(JSON.parse(built.stdout)).toMatchObject({
      ok: true,
      records: 3,
      signed: true,
      log: { origin: 'merchant-verify.example/log', from: 0, statement: 3 },
    });
    await readFile(join(shop, 'public/.well-known/merchant-verify-keys.json'), 'utf8');
  });

  it('runs its bin with plain node: `mvr verify --file` checks a saved record offline', async () => {
    const mvr = join(service, 'node_modules/.bin/mvr');
    const { stdout } = await run(mvr, ['verify', '--file', 'record.json', '--keys', 'keys.json', '--json'], { cwd: service });
    expect(JSON.parse(stdout)).toMatchObject({ valid: true, code: null, domain: DOMAIN });
    await writeFile(join(service, 'tampered.json'), JSON.stringify({ ...record, score: 99 }));
    const failed = await run(mvr, ['verify', '--file', 'tampered.json', '--keys', 'keys.json', '--json'], { cwd: service }).then(
      () => null,
      (e: { code: number; stdout: string }) => e,
    );
    expect(failed?.code).toBe(11);
    expect(JSON.parse(failed!.stdout)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
  });
});
