/**
 * `mvr verify DOMAIN --private`: the CLI hashes the normalized domain, asks the gateway for its
 * prefix only, and verifies the answer with the package: a record verifies (exit 0), a domain never
 * audited is proven absent (exit 15), and no line the gateway logged names either domain.
 */
import { readFile } from 'node:fs/promises';
import { gatewaySource, trustedKeySet, verifyOnlinePrivately } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { generatePrivateJwk, loadSigningKey } from '../../core/crypto/signing.ts';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { runCli } from '../support/cli.ts';
import { GOLD, UNAUDITED } from '../support/project.ts';
import { gatewayArgs, gold, gw, parseJson, saved, useGoldGateway } from '../support/verify-cli.ts';

useGoldGateway();

describe('mvr verify DOMAIN --private', () => {
  it('verifies a record and proves an absence from prefix answers, and the gateway never hears the domain', async () => {
    const before = gw.logs.length;
    const record = await runCli(['verify', `https://WWW.${GOLD}/shop`, '--private', '--json', ...gatewayArgs()]);
    expect(record.code).toBe(0);
    expect(parseJson(record.stdout)).toMatchObject({
      domain: GOLD,
      valid: true,
      code: null,
      private: true,
      signature: { valid: true, key_id: gold.key_id },
    });
    expect(parseJson(record.stdout).source).toMatch(/\/v1\/lookup\/[0-9a-f]+$/);
    const absent = await runCli(['verify', UNAUDITED, '--private', ...gatewayArgs()]);
    expect(absent.code).toBe(exitCodeOf('NEVER_AUDITED'));
    const lines = gw.logs.slice(before).map((l) => JSON.stringify(l));
    expect(lines.some((l) => l.includes('/v1/lookup/'))).toBe(true);
    expect(lines.filter((l) => l.includes(GOLD) || l.includes(UNAUDITED))).toEqual([]);
  });

  it('with --trusted-keys that do not trust the signing key: KEY_NOT_TRUSTED (its own exit), privately or not; the package says the same', async () => {
    const stranger = await saved('stranger-keys.json', { keys: [loadSigningKey(generatePrivateJwk()).publicJwk] });
    for (const more of [['--private'], []]) {
      const r = await runCli(['verify', GOLD, ...more, '--trusted-keys', stranger, '--json', ...gatewayArgs()]);
      expect(r.code, more.join(' ')).toBe(exitCodeOf('KEY_NOT_TRUSTED'));
      expect(parseJson(r.stdout), more.join(' ')).toMatchObject({
        valid: false,
        code: 'KEY_NOT_TRUSTED',
        signature: { valid: false, code: 'KEY_NOT_TRUSTED', key_id: gold.key_id },
        trust: { key_set: 'pinned' },
      });
    }
    const pinned = JSON.parse(await readFile(stranger, 'utf8'));
    const source = gatewaySource({ baseUrl: gw.url, apiKey: gw.key });
    const keySet = trustedKeySet(await source.keySet(), pinned).keySet;
    expect(await verifyOnlinePrivately({ domain: GOLD, source, keySet })).toMatchObject({
      code: 'KEY_NOT_TRUSTED',
      verification: { code: 'KEY_NOT_TRUSTED' },
      trust: { keySet: 'given' },
    });
  });

  it('refuses flags that verify a saved answer instead (exit 2)', async () => {
    const r = await runCli(['verify', GOLD, '--private', '--file', 'x.json', ...gatewayArgs()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--private');
  });
});
