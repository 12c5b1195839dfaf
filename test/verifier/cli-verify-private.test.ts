/**
 * `mvr verify DOMAIN --private`: the CLI hashes the normalized domain, asks the gateway for its
 * prefix only, and verifies the answer with the package: a record verifies (exit 0), a domain never
 * audited is proven absent (exit 15), and no line the gateway logged names either domain.
 */
import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../core/errors.ts';
import { runCli } from '../support/cli.ts';
import { GOLD, UNAUDITED } from '../support/project.ts';
import { gatewayArgs, gold, gw, parseJson, useGoldGateway } from '../support/verify-cli.ts';

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

  it('refuses flags that verify a saved answer instead (exit 2)', async () => {
    const r = await runCli(['verify', GOLD, '--private', '--file', 'x.json', ...gatewayArgs()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--private');
  });
});
