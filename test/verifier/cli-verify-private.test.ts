/**
 * `mvr verify DOMAIN --private`: the CLI hashes the normalized domain, reads the live statement,
 * asks the gateway for the domain's bucket only, and verifies the compact answer with the package:
 * an audited domain's entry verifies (exit 0; the record itself is not fetched), a domain never
 * audited is proven absent (exit 15), and no line the gateway logged names either domain.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { gatewaySource, trustedKeySet, verifyOnlineCompact } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { generatePrivateJwk, loadSigningKey } from '../../core/crypto/signing.ts';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { runCli } from '../support/cli.ts';
import { GOLD, UNAUDITED } from '../support/project.ts';
import { gatewayArgs, gold, gw, parseJson, saved, useGoldGateway } from '../support/verify-cli.ts';

useGoldGateway();

describe('mvr verify DOMAIN --private', () => {
  it('verifies an entry and proves an absence from compact answers, says the record was not fetched, and the gateway never hears the domain', async () => {
    const before = gw.logs.length;
    const record = await runCli(['verify', `https://WWW.${GOLD}/shop`, '--private', '--json', ...gatewayArgs()]);
    expect(record.code).toBe(0);
    const json = parseJson(record.stdout);
    expect(json).toMatchObject({
      domain: GOLD,
      valid: true,
      code: null,
      private: true,
      signature: null,
      entry: { valid: true, record_fetched: false },
      statement: { valid: true, key_id: gold.key_id },
      claims: { status: gold.status, tier: gold.tier, score: gold.score, next_audit_at: gold.next_audit_at },
    });
    expect(json.source).toMatch(/\/v1\/lookup\/\d+\/[0-9a-f]+$/);
    const text = await runCli(['verify', GOLD, '--private', ...gatewayArgs()]);
    expect(text.stdout).toContain(`VALID: ${GOLD}`);
    expect(text.stdout).toMatch(/record +not fetched/);
    const absent = await runCli(['verify', UNAUDITED, '--private', ...gatewayArgs()]);
    expect(absent.code).toBe(exitCodeOf('NEVER_AUDITED'));
    const lines = gw.logs.slice(before).map((l) => JSON.stringify(l));
    const paths = gw.logs.slice(before).flatMap((l) => (l.msg === 'request' ? [String(l.path)] : []));
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths.filter((p) => p.startsWith('/v1/lookup'))) expect(path).toMatch(/^\/v1\/lookup(\/\d+\/[0-9a-f]+)?$/);
    expect(paths.some((p) => /^\/v1\/lookup\/\d+\/[0-9a-f]+$/.test(p))).toBe(true);
    expect(lines.filter((l) => l.includes(GOLD) || l.includes(UNAUDITED))).toEqual([]);
    // The hash the record must have: the one a plain lookup's bytes give (asked last: it names the domain).
    const bytes = Buffer.from(
      await (await fetch(`${gw.url}/v1/verify?domain=${GOLD}`, { headers: { authorization: `Bearer ${gw.key}` } })).arrayBuffer(),
    );
    expect(json.entry.record_hash).toBe(createHash('sha256').update(bytes).digest('base64'));
  });

  it('with --trusted-keys that do not trust the signing key: KEY_NOT_TRUSTED plainly; privately the build statement is refused for it (STATEMENT_NOT_SIGNED); the package says the same', async () => {
    const stranger = await saved('stranger-keys.json', { keys: [loadSigningKey(generatePrivateJwk()).publicJwk] });
    const plain = await runCli(['verify', GOLD, '--trusted-keys', stranger, '--json', ...gatewayArgs()]);
    expect(plain.code).toBe(exitCodeOf('KEY_NOT_TRUSTED'));
    expect(parseJson(plain.stdout)).toMatchObject({
      valid: false,
      code: 'KEY_NOT_TRUSTED',
      signature: { valid: false, code: 'KEY_NOT_TRUSTED', key_id: gold.key_id },
      trust: { key_set: 'pinned' },
    });
    // An entry's verdict stands on the build statement, whose signing key is the one not trusted.
    const privately = await runCli(['verify', GOLD, '--private', '--trusted-keys', stranger, '--json', ...gatewayArgs()]);
    expect(privately.code).toBe(exitCodeOf('STATEMENT_NOT_SIGNED'));
    expect(parseJson(privately.stdout)).toMatchObject({ valid: false, code: 'STATEMENT_NOT_SIGNED', trust: { key_set: 'pinned' } });
    expect(parseJson(privately.stdout).message).toContain('KEY_NOT_TRUSTED');
    const pinned = JSON.parse(await readFile(stranger, 'utf8'));
    const source = gatewaySource({ baseUrl: gw.url, apiKey: gw.key });
    const keySet = trustedKeySet(await source.keySet(), pinned).keySet;
    expect(await verifyOnlineCompact({ domain: GOLD, source, keySet })).toMatchObject({
      code: 'STATEMENT_NOT_SIGNED',
      entry: null,
      trust: { keySet: 'given' },
    });
  });

  it('refuses flags that verify a saved answer instead (exit 2)', async () => {
    const r = await runCli(['verify', GOLD, '--private', '--file', 'x.json', ...gatewayArgs()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--private');
  });
});
