/** The CLI's options: one table, read in the order flag, environment, default, and only a command's own. */
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiKeysFileOf, commandOptions, schemaUrlOf } from '../../cli/config.ts';
import { TRUST_OPTIONS, trustOf } from '../../cli/trust-options.ts';
import { generatePrivateJwk, loadSigningKey } from '../../core/crypto/signing.ts';
import { removeTempDirs, tempDir } from '../support/project.ts';

afterAll(removeTempDirs);

describe('commandOptions', () => {
  const gateway = commandOptions('port', 'host', 'keys', 'apiKeys', 'issuer', 'schemaUrl', 'cacheMb');

  it('takes the flag, else the environment variable, else the default; an empty one counts as unset', () => {
    expect(gateway.resolve({ port: '9000' }, { PORT: '9100' }).port).toBe(9000);
    expect(gateway.resolve({}, { PORT: '9100' }).port).toBe(9100);
    expect(gateway.resolve({ port: '' }, { PORT: '' }).port).toBe(8787);
    expect(gateway.resolve({}, {}).keys).toBe(resolve('keys'));
  });

  it('derives the API key file and the schema URL from other options unless they are given', () => {
    const defaults = gateway.resolve({ keys: '/srv/k', issuer: 'verify.example.com' }, {});
    expect(apiKeysFileOf(defaults)).toBe('/srv/k/api-keys.json');
    expect(schemaUrlOf(defaults)).toBe('https://verify.example.com/schemas/verification/v1');
    const given = gateway.resolve({ 'api-keys': '/etc/mvr/keys.json' }, { MVR_SCHEMA_URL: 'http://x.example/s/verification/v1' });
    expect(apiKeysFileOf(given)).toBe('/etc/mvr/keys.json');
    expect(schemaUrlOf(given)).toBe('http://x.example/s/verification/v1');
  });

  it.each([
    [{ port: '70000' }, {}, /^--port \/ PORT "70000": must be a port/],
    [{}, { PORT: 'abc' }, /^--port \/ PORT "abc": must be a port/],
    [{}, { MVR_CACHE_MB: '0' }, /^--cache-mb \/ MVR_CACHE_MB "0": must be a positive whole number/],
    [{ issuer: 'Not A Host' }, {}, /^--issuer \/ MVR_ISSUER "Not A Host": must be a lowercase hostname/],
    [{ 'schema-url': 'https://x.example/other' }, {}, /^--schema-url \/ MVR_SCHEMA_URL .*\/verification\/v1/],
  ])('refuses %j %j with INVALID_CONFIG naming the flag, the variable and the value', (args, env, message) => {
    expect(() => gateway.resolve(args, env)).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringMatching(message) }),
    );
  });

  it("reads only the command's own options: a variable meant for another command never stops this one", () => {
    expect(commandOptions('keys').resolve({}, { PORT: 'abc', MVR_CACHE_MB: 'x', MVR_ISSUER: 'Not A Host' })).toEqual({
      keys: resolve('keys'),
    });
    expect(commandOptions('keys').args).toEqual({
      keys: expect.objectContaining({ type: 'string', description: expect.stringContaining('MVR_KEYS_DIR') }),
    });
  });

  it('metrics are off unless --metrics-port / MVR_METRICS_PORT is given, on 127.0.0.1 unless --metrics-host says otherwise', () => {
    const metrics = commandOptions('metricsPort', 'metricsHost');
    expect(metrics.resolve({}, {})).toEqual({ metricsPort: undefined, metricsHost: '127.0.0.1' });
    expect(metrics.resolve({ 'metrics-port': '0' }, {})).toEqual({ metricsPort: 0, metricsHost: '127.0.0.1' });
    expect(metrics.resolve({}, { MVR_METRICS_PORT: '9464', MVR_METRICS_HOST: '10.0.0.5' })).toEqual({
      metricsPort: 9464,
      metricsHost: '10.0.0.5',
    });
    expect(() => metrics.resolve({ 'metrics-port': 'on' }, {})).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        message: expect.stringMatching(/^--metrics-port \/ MVR_METRICS_PORT "on": must be a port/),
      }),
    );
  });

  it('trust: no pinned keys and no unsigned builds unless told; --unsigned or MVR_UNSIGNED=1; a pinned file must list a key', async () => {
    const trust = commandOptions(...TRUST_OPTIONS);
    const folder = { url: '/srv/records' };
    expect(await trustOf(trust.resolve({}, {}), {}, folder)).toEqual({ unsigned: false });
    expect(await trustOf(trust.resolve({}, { MVR_UNSIGNED: '1' }), {}, folder)).toEqual({ unsigned: true });
    expect(await trustOf(trust.resolve({}, {}), { unsigned: true }, folder)).toEqual({ unsigned: true });
    expect(() => trust.resolve({}, { MVR_UNSIGNED: 'yes please' })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    const dir = await tempDir('mvr-trust-config-');
    const empty = join(dir, 'empty.json');
    await writeFile(empty, JSON.stringify({ keys: [{ kty: 'RSA', kid: 'r', n: 'AQAB', e: 'AQAB' }] }));
    await expect(trustOf(trust.resolve({ 'trusted-keys': empty }, {}), {}, folder)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: `--trusted-keys ${empty}: lists no Ed25519 key, so it would trust nothing`,
    });
    const pinned = { keys: [loadSigningKey(generatePrivateJwk()).publicJwk] };
    await writeFile(join(dir, 'pinned.json'), JSON.stringify(pinned));
    expect(await trustOf(trust.resolve({}, { MVR_TRUSTED_KEYS: join(dir, 'pinned.json') }), {}, folder)).toEqual({
      trustedKeys: pinned,
      unsigned: false,
    });
    // A bucket or an origin: the keys from the operator, or unsigned builds only (no key trusted).
    for (const url of ['s3://bucket/prod', 'https://records.example/live/']) {
      await expect(trustOf(trust.resolve({}, {}), {}, { url })).rejects.toMatchObject({
        code: 'INVALID_CONFIG',
        message: expect.stringMatching(/^--records \S+: give the record keys to trust with --trusted-keys FILE \(or MVR_TRUSTED_KEYS\)/),
      });
      expect(await trustOf(trust.resolve({}, { MVR_UNSIGNED: '1' }), {}, { url })).toEqual({ unsigned: true, trustedKeys: { keys: [] } });
      expect(await trustOf(trust.resolve({ 'trusted-keys': join(dir, 'pinned.json') }, {}), {}, { url })).toEqual({
        trustedKeys: pinned,
        unsigned: false,
      });
    }
  });
});
