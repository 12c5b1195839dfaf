/**
 * The monthly rebuild's programs (scripts/ci/), run as code on inputs made here: the key set
 * carry-over, the build summary checks and the scan of public/ for private key material. The
 * workflow test runs them inside the whole job; these show each check failing on its own.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, removeTempDirs, tempDir } from '../support/project.ts';

afterAll(removeTempDirs);
const execFileP = promisify(execFile);

/** Runs `node scripts/ci/<name> ...args` in `cwd`; never rejects on a non-zero exit. */
async function script(name: string, args: string[], env: Record<string, string> = {}, cwd = ROOT): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await execFileP(process.execPath, [join(ROOT, 'scripts/ci', name), ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

const key = (kid: string, extra: Record<string, string> = {}) => ({
  kty: 'OKP',
  crv: 'Ed25519',
  x: 'AAAA',
  kid,
  use: 'sig',
  alg: 'EdDSA',
  ...extra,
});
const writeJson = (file: string, value: unknown) => writeFileSync(file, JSON.stringify(value));

describe('carry-key-set.mjs', () => {
  it('copies the published keys minus the retired ones, and warns about a retired id it does not know', async () => {
    const dir = await tempDir('mvr-ci-keys-');
    writeJson(join(dir, 'published.json'), { keys: [key('old'), key('older')] });
    const r = await script('carry-key-set.mjs', [join(dir, 'published.json'), join(dir, 'keep.json')], { RETIRE_KEY_IDS: 'older, nosuch' });
    expect(r.code, r.out).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'keep.json'), 'utf8'))).toEqual({ keys: [key('old')] });
    expect(r.out).toContain('::warning::retire_key_ids: nosuch is not in the published key set');
    expect(r.out).toContain('carried over: old; retired: older, nosuch');
  });

  it('refuses a key set holding a private key, and a file that is not a JWK Set', async () => {
    const dir = await tempDir('mvr-ci-keys-');
    writeJson(join(dir, 'private.json'), { keys: [key('old', { d: 'secret' })] });
    writeJson(join(dir, 'other.json'), { nope: [] });
    const privateKey = await script('carry-key-set.mjs', [join(dir, 'private.json'), join(dir, 'keep.json')]);
    expect(privateKey.code).not.toBe(0);
    expect(privateKey.out).toContain('holds a private key');
    const notASet = await script('carry-key-set.mjs', [join(dir, 'other.json'), join(dir, 'keep.json')]);
    expect(notASet.code).not.toBe(0);
    expect(notASet.out).toContain('not a JWK Set');
  });
});

describe('scan-public.mjs', () => {
  const publicDir = async (files: Record<string, string>) => {
    const dir = join(await tempDir('mvr-ci-scan-'), 'public');
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(dir, name, '..'), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    return dir;
  };
  const keySet = JSON.stringify({ keys: [key('k1')] });

  it('passes a public folder with public keys only', async () => {
    const r = await script('scan-public.mjs', [
      await publicDir({ '.well-known/merchant-verify-keys.json': keySet, 'schemas/x.json': '{"a":{"b":[1]}}' }),
    ]);
    expect(r.code, r.out).toBe(0);
  });

  it('names a member "d" at any depth, a JSON file that does not parse, and a key set member outside the public ones', async () => {
    const r = await script('scan-public.mjs', [
      await publicDir({
        '.well-known/merchant-verify-keys.json': JSON.stringify({ keys: [key('k1', { p: 'x' })] }),
        'deep/x.json': '{"a":[{"b":{"d":"secret"}}]}',
        'broken.json': '{',
      }),
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/::error::.*deep\/x\.json: member "d" at \$\.a\[0\]\.b/);
    expect(r.out).toMatch(/::error::.*broken\.json: not JSON/);
    expect(r.out).toContain('::error::key set: key k1 has member "p"');
  });
});

describe('check-build-summary.mjs', () => {
  /** A project folder with a build as `mvr build --json` describes it, and the step's environment. */
  const setUp = async (patch: Record<string, unknown> = {}, manifestPatch: Record<string, unknown> = {}) => {
    const dir = await tempDir('mvr-ci-summary-');
    const buildDir = join(dir, 'records/builds/b1');
    mkdirSync(buildDir, { recursive: true });
    symlinkSync('builds/b1', join(dir, 'records/current'));
    writeJson(join(dir, 'keys.json'), { keys: [key('new'), key('old')] });
    writeJson(join(dir, 'carried.json'), { keys: [key('old')] });
    writeJson(join(buildDir, 'manifest.json'), { records: 40, key_id: 'new', issuer: 'verify.example.com', ...manifestPatch });
    const summary = {
      ok: true,
      signed: true,
      key_id: 'new',
      records: 40,
      published_key_ids: ['new', 'old'],
      key_set_file: join(dir, 'keys.json'),
      build_dir: buildDir,
      build_id: 'b1',
      issued_at: '2026-11-01T00:00:00.000Z',
      by_status: { verified: 40 },
      by_tier: {},
      log: { origin: 'verify.example.com/log', from: 0, to: 41, statement: 40 },
      ...patch,
    };
    writeJson(join(dir, 'summary.json'), summary);
    writeFileSync(join(dir, 'step-summary.md'), '');
    const env = {
      SUMMARY: join(dir, 'summary.json'),
      PUBLISH_KEYS: join(dir, 'carried.json'),
      MIN_RECORDS: '10',
      MVR_ISSUER: 'verify.example.com',
      GITHUB_STEP_SUMMARY: join(dir, 'step-summary.md'),
      RETIRE_KEY_IDS: '',
    };
    return { dir, env, stepSummary: () => readFileSync(join(dir, 'step-summary.md'), 'utf8') };
  };

  it('passes a signed build that keeps the carried keys, and writes the step summary', async () => {
    const { dir, env, stepSummary } = await setUp();
    const r = await script('check-build-summary.mjs', [], env, dir);
    expect(r.code, r.out).toBe(0);
    expect(stepSummary()).toContain('### Monthly rebuild b1: checks passed');
  });

  it.each([
    ['unsigned records', { signed: false, key_id: null }, {}, 'the records are UNSIGNED'],
    ['fewer records than the minimum', { records: 5 }, { records: 5 }, '5 records, fewer than the minimum 10'],
    ['a carried key dropped', { published_key_ids: ['new'] }, {}, 'earlier key old dropped out of the key set'],
    ['another issuer', {}, { issuer: 'other.example' }, 'the records name issuer other.example'],
    ['records not all in the log', { log: null }, {}, 'the records were not all appended to the transparency log'],
    [
      'a log without the build statement',
      { log: { origin: 'verify.example.com/log', from: 0, to: 40 } },
      {},
      'the records were not all appended to the transparency log',
    ],
    [
      'the statement not last',
      { log: { origin: 'verify.example.com/log', from: 0, to: 41, statement: 0 } },
      {},
      "the build statement is not the log's last entry",
    ],
  ])('fails on %s, naming it', async (_what, patch, manifestPatch, message) => {
    const { dir, env, stepSummary } = await setUp(patch, manifestPatch);
    const r = await script('check-build-summary.mjs', [], env, dir);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`::error::${message}`);
    expect(stepSummary()).toContain('FAILED checks');
  });
});
