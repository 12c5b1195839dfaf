/**
 * `mvr verify --file` offline: the CLI is spawned against saved records and a key set file or
 * URL (the gateway of test/support/verify-cli.ts serves the URL and the records saved).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { describe, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { GOLD } from '../support/project.ts';
import { gold, goldText, gw, parseJson, project, saved, useGoldGateway } from '../support/verify-cli.ts';

useGoldGateway();

describe.concurrent('mvr verify --file PATH --keys FILE_OR_URL (offline)', () => {
  it('the saved record verifies against the key set file: exit 0', async ({ expect }) => {
    const file = await saved('gold.json', goldText);
    const r = await runCli(['verify', '--file', file, '--key-set', project.keySetFile, '--json']);
    expect(r.code).toBe(0);
    expect(parseJson(r.stdout)).toMatchObject({ valid: true, domain: GOLD, signature: { key_id: project.kid }, source: file });
  });

  it('a tampered saved file (one character): exit 11 BAD_SIGNATURE', async ({ expect }) => {
    expect(goldText).toContain('"tier":"gold"');
    const file = await saved('tampered.json', goldText.replace('"score":93.5', '"score":98.5'));
    const r = await runCli(['verify', '--file', file, '--key-set', project.keySetFile, '--json']);
    expect(r.code).toBe(11);
    expect(parseJson(r.stdout)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE', claims: { score: 98.5 } });
    // The text leads with the verdict; what the record claims comes last, labelled as not verified.
    const text = await runCli(['verify', '--file', file, '--key-set', project.keySetFile]);
    expect(text.code).toBe(11);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^INVALID \(BAD_SIGNATURE\): /);
    expect(lines.at(-1)).toMatch(/^\s+claims\s+\(not verified\) status verified, tier gold, score 98\.5\/100/);
    expect(lines.slice(0, -1).join('\n')).not.toMatch(/gold|98\.5/);
  });

  it('--file with --keys as a URL', async ({ expect }) => {
    const file = await saved('gold-url.json', goldText);
    const r = await runCli(['verify', '--file', file, '--key-set', `${gw.url}${KEY_SET_PATH}`, '--json']);
    expect(r.code).toBe(0);
    expect(parseJson(r.stdout)).toMatchObject({ valid: true });
  });

  it('an unknown key id: exit 11 UNKNOWN_KEY', async ({ expect }) => {
    const file = await saved('unknown-kid.json', { ...gold, key_id: randomBytes(32).toString('base64url') });
    const offline = await runCli(['verify', '--file', file, '--key-set', project.keySetFile, '--json']);
    expect(offline.code).toBe(11);
    expect(parseJson(offline.stdout)).toMatchObject({ valid: false, code: 'UNKNOWN_KEY' });
  });

  it('a saved record checked against another domain: exit 11 DOMAIN_MISMATCH', async ({ expect }) => {
    const file = await saved('gold-other.json', goldText);
    const r = await runCli(['verify', 'bluebird-books.example', '--file', file, '--key-set', project.keySetFile, '--json']);
    expect(r.code).toBe(11);
    expect(parseJson(r.stdout)).toMatchObject({ valid: false, code: 'DOMAIN_MISMATCH' });
  });

  it('a saved record without a signature: exit 10 UNSIGNED', async ({ expect }) => {
    const { key_id: _k, signature: _s, ...rest } = gold;
    const file = await saved('stripped.json', rest);
    const r = await runCli(['verify', '--file', file, '--key-set', project.keySetFile, '--json']);
    expect(r.code).toBe(10);
    expect(parseJson(r.stdout)).toMatchObject({ valid: false, code: 'UNSIGNED' });
  });

  it('a --keys file that holds a private key is refused, never used to pass a record', async ({ expect }) => {
    const file = await saved('gold-leaked.json', goldText);
    const keySet = JSON.parse(await readFile(project.keySetFile, 'utf8')) as { keys: Record<string, unknown>[] };
    const leaked = await saved('leaked-keys.json', { keys: keySet.keys.map((k) => ({ ...k, d: randomBytes(32).toString('base64url') })) });
    const r = await runCli(['verify', '--file', file, '--key-set', leaked, '--json']);
    // INVALID_KEY_SET (exit 3), as when the same set is fetched by URL. The error is thrown inside
    // the @merchant-verify/verifier package, by its own copy of the error classes: the CLI's edge
    // knows it by its registered code.
    expect(r.code).toBe(3);
    const out = parseJson(r.stdout);
    expect(out).toMatchObject({ ok: false, code: 'INVALID_KEY_SET' });
    expect(out.message).toMatch(/private/);
  });

  it('a --keys file that also lists keys of other types (ML-DSA, RSA, X25519) verifies with them skipped: exit 0', async ({ expect }) => {
    const file = await saved('gold-mixed-set.json', goldText);
    const keySet = JSON.parse(await readFile(project.keySetFile, 'utf8')) as { keys: Record<string, unknown>[] };
    const foreign = [
      { kty: 'AKP', alg: 'ML-DSA-65', pub: randomBytes(1952).toString('base64url'), kid: 'pq-1', use: 'sig' },
      { kty: 'RSA', n: randomBytes(256).toString('base64url'), e: 'AQAB', kid: 'rsa-1' },
      { kty: 'OKP', crv: 'X25519', x: randomBytes(32).toString('base64url'), kid: 'x-1' },
    ];
    const mixed = await saved('mixed-keys.json', { keys: [foreign[0], ...keySet.keys, ...foreign.slice(1)] });
    const r = await runCli(['verify', '--file', file, '--key-set', mixed, '--json']);
    expect(r.code).toBe(0);
    expect(parseJson(r.stdout)).toMatchObject({ valid: true, domain: GOLD, signature: { key_id: project.kid } });
  });

  it('--file without --keys or --base-url is a usage error: exit 2', async ({ expect }) => {
    const file = await saved('gold-nokeys.json', goldText);
    const r = await runCli(['verify', '--file', file]);
    expect(r.code).toBe(2);
  });
});
