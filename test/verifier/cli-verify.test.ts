/**
 * `mvr verify` end to end: the CLI is spawned (`node bin/mvr.js verify ...` in /work/main)
 * against a real gateway over a real build. Exit codes: 0 valid, 10 UNSIGNED, 11 invalid
 * signature / unknown key / domain mismatch, 12 FETCH_FAILED, 15 never audited (absence proven),
 * 16 absence not proven, 3 invalid domain, 2 usage.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { describe, it } from 'vitest';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { normalizeDomain } from '../../core/rules/domain.ts';
import { runCli } from '../support/cli.ts';
import { freePort as closedPort } from '../support/ports.ts';
import { GOLD, UNAUDITED } from '../support/project.ts';
import { gatewayArgs, gatewayJson, gold, gw, parseJson, project, saved, useGoldGateway } from '../support/verify-cli.ts';

useGoldGateway();

// Each test spawns its own CLI children and shares only read-only state: run them side by side.
describe.concurrent('mvr verify DOMAIN --base-url URL', () => {
  it('the exit codes are the documented ones, from the error registry', ({ expect }) => {
    const exits = Object.fromEntries(
      [
        'INVALID_CONFIG',
        'INVALID_KEY_SET',
        'INVALID_DOMAIN',
        'UNSIGNED',
        'BAD_SIGNATURE',
        'UNKNOWN_KEY',
        'DOMAIN_MISMATCH',
        'FETCH_FAILED',
        'BUILD_FAILED',
      ].map((c) => [c, exitCodeOf(c)]),
    );
    expect(exits).toEqual({
      INVALID_CONFIG: 2,
      INVALID_KEY_SET: 3,
      INVALID_DOMAIN: 3,
      UNSIGNED: 10,
      BAD_SIGNATURE: 11,
      UNKNOWN_KEY: 11,
      DOMAIN_MISMATCH: 11,
      FETCH_FAILED: 12,
      BUILD_FAILED: 1,
    });
  });

  it('a valid signed record: exit 0 and a human summary (status, tier, score, audited, signature valid)', async ({ expect }) => {
    const r = await runCli(['verify', GOLD, ...gatewayArgs()]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(`VALID: ${GOLD}`);
    expect(r.stdout).toMatch(/^\s+status\s+verified, tier gold, score 93\.5\/100$/m);
    expect(r.stdout).toMatch(/^\s+audited\s+2026-10-15 \(\d+ days? ago\); next audit 2026-11-15/m);
    expect(r.stdout).toMatch(new RegExp(`^\\s+signature\\s+valid \\(key ${project.kid}\\)$`, 'm'));
  });

  it('an IDN domain is shown in Unicode beside its A-labels, in the text and as domain_unicode in the JSON', async ({ expect }) => {
    const idn = normalizeDomain('bücher-haus.example');
    expect(idn).toMatch(/^xn--/);
    const text = await runCli(['verify', 'bücher-haus.example', ...gatewayArgs()]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split('\n')[0]).toBe(`VALID: ${idn} (bücher-haus.example)`);
    const json = parseJson((await runCli(['verify', idn, ...gatewayArgs(), '--json'])).stdout);
    expect(json).toMatchObject({ domain: idn, domain_unicode: 'bücher-haus.example' });
    expect(parseJson((await runCli(['verify', GOLD, ...gatewayArgs(), '--json'])).stdout).domain_unicode).toBeNull();
  });

  it('a valid signed record with --json: the verdict first, each step under its own member, the claims last', async ({ expect }) => {
    const r = await runCli(['verify', 'https://WWW.Acme-Outdoor.example/tents?x=1', ...gatewayArgs(), '--json']);
    expect(r.code).toBe(0);
    const out = parseJson(r.stdout);
    expect(Object.keys(out)).toEqual([
      'valid',
      'code',
      'message',
      'domain',
      'domain_unicode',
      'source',
      'signature',
      'absence',
      'log',
      'witnesses',
      'current',
      'age',
      'staleness',
      'trust',
      'claims',
    ]);
    expect(out).toMatchObject({
      valid: true,
      code: null,
      message: null,
      domain: GOLD,
      signature: { valid: true, code: null, key_id: project.kid },
      absence: null,
      log: null,
      witnesses: null,
      // No log check, so nothing proved this record's build the newest.
      current: null,
      // Without a policy, how old the build is, and no cosignature to tell of.
      age: { issued_at: gold.issued_at, build_age_seconds: expect.any(Number), newest_cosignature_at: null },
      staleness: { last_audited_at: '2026-10-15T12:00:00.000Z', next_audit_at: '2026-11-15T12:00:00.000Z' },
      // The key set came from the gateway being checked: trust on first use, said so; no log check ran.
      trust: { key_set: 'first_use', key_set_source: `${gw.url}${KEY_SET_PATH}`, log_key: null, log_key_source: null },
      claims: { status: 'verified', tier: 'gold', score: 93.5, key_id: project.kid },
    });
    expect(['current', 'overdue']).toContain(out.staleness.state);
    expect(out.source).toBe(`${gw.url}/v1/verify?domain=${GOLD}`);
  });

  it('a never-audited domain: its absence proof checked, exit 15 NEVER_AUDITED (never 0)', async ({ expect }) => {
    const json = await runCli(['verify', UNAUDITED, ...gatewayArgs(), '--json']);
    expect(json.code).toBe(15);
    expect(exitCodeOf('NEVER_AUDITED')).toBe(15);
    const builds = (await gatewayJson('/v1/builds')) as { builds: { id: string }[] };
    expect(parseJson(json.stdout)).toMatchObject({
      valid: false,
      code: 'NEVER_AUDITED',
      domain: UNAUDITED,
      signature: { valid: false, code: 'UNSIGNED' },
      absence: { valid: true, build: builds.builds[0]!.id, key_id: project.kid },
      staleness: { state: 'never_audited' },
      claims: { status: 'unverified', score: null },
    });
    const text = await runCli(['verify', UNAUDITED, ...gatewayArgs()]);
    expect(text.code).toBe(15);
    expect(text.stdout.split('\n')[0]).toBe(
      `NOT VERIFIED (NEVER_AUDITED): no record in build ${builds.builds[0]!.id} (issued ${parseJson(json.stdout).absence.issued_at}): never audited, which is not verified`,
    );
    expect(text.stdout).toContain(`never audited in build ${builds.builds[0]!.id}`);
    expect(text.stdout).toContain('proof valid');
    // The absence proof proves it: no signature line, let alone an alarming UNSIGNED one.
    expect(text.stdout).toMatch(/^ {2}absence {4}/m);
    expect(text.stdout).not.toMatch(/^ {2}signature/m);
    expect(text.stdout).not.toContain('UNSIGNED');
    expect(text.stdout.trimEnd().split('\n').at(-1)).toBe('  claims     (not verified) status unverified, score none; never audited');
  });

  it("--absence FILE: a saved proof checked offline; a changed one or another domain's is exit 16", async ({ expect }) => {
    const proof = (await gatewayJson(`/v1/absence?domain=${UNAUDITED}`)) as Record<string, any>;
    const keys = await saved('absence-keys.json', await readFile(join(project.publicDir, KEY_SET_PATH), 'utf8'));
    const ok = await runCli(['verify', UNAUDITED, '--absence', await saved('absence.json', proof), '--key-set', keys, '--json']);
    expect(ok.code, ok.stderr).toBe(15);
    expect(parseJson(ok.stdout)).toMatchObject({ domain: UNAUDITED, absence: { valid: true } });
    const moved = { ...proof, left: proof.right, right: proof.left };
    const bad = await runCli(['verify', UNAUDITED, '--absence', await saved('absence-bad.json', moved), '--key-set', keys, '--json']);
    expect(bad.code).toBe(16);
    expect(parseJson(bad.stdout)).toMatchObject({ absence: { valid: false, code: 'NOT_ABSENT' } });
    const other = await runCli([
      'verify',
      'someone-else.example',
      '--absence',
      await saved('absence-other.json', proof),
      '--key-set',
      keys,
    ]);
    expect(other.code).toBe(16);
    expect(other.stdout).toMatch(/NOT PROVEN: MALFORMED_ABSENCE_PROOF/);
  });

  it('an "unverified" answer for an audited domain (made up on the way) is exit 16: the build has a record', async ({ expect }) => {
    const { key_id: _k, signature: _s, ...fake } = { ...gold, status: 'unverified', score: null, tier: null } as Record<string, unknown>;
    const r = await runCli(['verify', '--file', await saved('made-up.json', fake), ...gatewayArgs(), '--json']);
    expect(r.code).toBe(16);
    expect(parseJson(r.stdout)).toMatchObject({ absence: { valid: false, code: 'NOT_ABSENT' } });
    expect(parseJson(r.stdout).absence.message).toMatch(/has a record/);
  });

  it('--keys as a URL (the key set fetched from there)', async ({ expect }) => {
    const r = await runCli(['verify', GOLD, ...gatewayArgs(), '--key-set', `${gw.url}${KEY_SET_PATH}`, '--json']);
    expect(r.code).toBe(0);
    expect(parseJson(r.stdout)).toMatchObject({ valid: true, signature: { key_id: project.kid }, trust: { key_set: 'first_use' } });
  });

  it('a key set taken on first use is said in one line; a key set file, or the fetched one checked against --trusted-keys, is pinned', async ({
    expect,
  }) => {
    const firstUse = await runCli(['verify', GOLD, ...gatewayArgs()]);
    expect(firstUse.code).toBe(0);
    expect(firstUse.stdout).toContain(`  key set    taken from ${gw.url}${KEY_SET_PATH} (first use; pin it with --trusted-keys FILE)\n`);
    for (const more of [
      ['--key-set', project.keySetFile],
      ['--trusted-keys', project.keySetFile],
    ]) {
      const text = await runCli(['verify', GOLD, ...gatewayArgs(), ...more]);
      expect(text.code, more.join(' ')).toBe(0);
      expect(text.stdout, more.join(' ')).not.toContain('first use');
      const json = parseJson((await runCli(['verify', GOLD, ...gatewayArgs(), ...more, '--json'])).stdout);
      expect(json.trust, more.join(' ')).toMatchObject({ key_set: 'pinned', log_key: null });
    }
  });

  it('takes the API key from MVR_API_KEY', async ({ expect }) => {
    const r = await runCli(['verify', GOLD, '--base-url', gw.url, '--json'], { MVR_API_KEY: gw.key });
    expect(r.code).toBe(0);
    expect(parseJson(r.stdout)).toMatchObject({ valid: true, domain: GOLD });
  });

  it('the gateway down (closed port): exit 12 FETCH_FAILED', async ({ expect }) => {
    const base = `http://127.0.0.1:${await closedPort()}`;
    const json = await runCli(['verify', GOLD, '--base-url', base, '--api-key', gw.key, '--json']);
    expect(json.code).toBe(12);
    expect(parseJson(json.stdout)).toMatchObject({ ok: false, code: 'FETCH_FAILED' });
  });

  it('a key the gateway refuses: exit 12 naming the 401, and the key never printed', async ({ expect }) => {
    const wrong = `mvr_0000000000_${randomBytes(32).toString('base64url')}`;
    const r = await runCli(['verify', GOLD, '--base-url', gw.url, '--api-key', wrong, '--json']);
    expect(r.code).toBe(12);
    const out = parseJson(r.stdout);
    expect(out).toMatchObject({ ok: false, code: 'FETCH_FAILED' });
    expect(out.message).toContain('401');
    expect(r.stdout + r.stderr).not.toContain(wrong);
  });

  it('usage errors: no --base-url, no API key: exit 2', async ({ expect }) => {
    const noBase = await runCli(['verify', GOLD, '--api-key', gw.key]);
    expect(noBase.code).toBe(2);
    expect(noBase.stderr).toMatch(/--base-url/);
    const noKey = await runCli(['verify', GOLD, '--base-url', gw.url]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/--api-key/);
  });

  it('an invalid domain: exit 3 INVALID_DOMAIN, before any request', async ({ expect }) => {
    const r = await runCli(['verify', 'localhost', ...gatewayArgs(), '--json']);
    expect(r.code).toBe(3);
    expect(parseJson(r.stdout)).toMatchObject({ ok: false, code: 'INVALID_DOMAIN' });
    const human = await runCli(['verify', 'co.uk', '--base-url', gw.url, '--api-key', gw.key]);
    expect(human.code).toBe(3);
    expect(human.stderr).toMatch(/INVALID_DOMAIN/);
  });
});
