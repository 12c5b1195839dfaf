/**
 * The endorsement chain, checked by the portable verifier (`trustedKeySet`): a key is trusted when
 * pinned, or endorsed by a trusted key, link by link in any order; an endorsement by an untrusted
 * key, a forged or altered one, one of another type, or a key listed under a trusted kid with
 * another `x` trusts nothing. And `mvr verify --trusted-keys` refuses a record signed by a key its
 * key set lists but nobody trusted endorsed.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidKeySetError, type KeyEndorsement, type KeySet, trustedKeySet, verifyRecord } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { generatePrivateJwk, loadSigningKey, type SigningKey, signRecord } from '../../core/crypto/signing.ts';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { endorseKey } from '../../core/rules/key-endorsement.ts';
import { runCli } from '../support/cli.ts';
import { liveRecord } from '../support/outputs.ts';
import { GOLD, makeProject, removeTempDirs, tempDir } from '../support/project.ts';

afterAll(removeTempDirs);

const AT = '2026-11-01T00:00:00Z';
const newKey = (): SigningKey => loadSigningKey(generatePrivateJwk());
const [k1, k2, k3, stranger] = [newKey(), newKey(), newKey(), newKey()];
const pin = (...keys: SigningKey[]): KeySet => ({ keys: keys.map((k) => k.publicJwk) });
const kids = (keySet: unknown, pinned: unknown) => trustedKeySet(keySet, pinned).keySet.keys.map((k) => k.kid);

describe('trustedKeySet', () => {
  const e12 = endorseKey(k2.publicJwk, k1, AT);
  const e23 = endorseKey(k3.publicJwk, k2, AT);

  it('trusts pinned keys and follows k1 -> k2 -> k3 in any order, whether or not the keys between are listed', () => {
    expect(kids({ keys: [k3.publicJwk, k2.publicJwk, k1.publicJwk], endorsements: [e12, e23] }, pin(k1))).toEqual([k3.kid, k2.kid, k1.kid]);
    expect(kids({ keys: [k3.publicJwk], endorsements: [e23, e12] }, pin(k1))).toEqual([k3.kid]);
    // Pinned to a later key, the earlier ones are not trusted: an endorsement goes forward only.
    const untrusted = [{ kid: k1.kid, reason: 'neither pinned nor endorsed by a trusted key' }];
    expect(trustedKeySet({ keys: [k1.publicJwk, k3.publicJwk], endorsements: [e12, e23] }, pin(k3))).toMatchObject({
      keySet: { keys: [k3.publicJwk], untrusted },
      untrusted,
    });
  });

  it('an endorsement by a key nobody trusted, or a broken link, trusts nothing', () => {
    const byStranger = endorseKey(k2.publicJwk, stranger, AT);
    expect(kids({ keys: [k2.publicJwk, stranger.publicJwk], endorsements: [byStranger] }, pin(k1))).toEqual([]);
    expect(kids({ keys: [k3.publicJwk], endorsements: [e23] }, pin(k1))).toEqual([]);
  });

  it('a forged, altered or mistyped endorsement trusts nothing', () => {
    const cases: Record<string, unknown> = {
      'another key put in a genuine endorsement': { ...e12, key: stranger.publicJwk },
      'signed with another key under the trusted kid': { ...endorseKey(stranger.publicJwk, stranger, AT), key_id: k1.kid },
      'another type, signed by the trusted key': signRecord({ type: 'something-else', key: stranger.publicJwk, issued_at: AT }, k1),
      'the signature missing': (({ signature: _s, ...rest }: KeyEndorsement) => rest)(endorseKey(stranger.publicJwk, k1, AT)),
      'a record-shaped value': { domain: 'x.example' },
    };
    for (const [name, entry] of Object.entries(cases))
      expect(kids({ keys: [stranger.publicJwk], endorsements: [entry] }, pin(k1)), name).toEqual([]);
  });

  it('a key listed under a trusted kid with another x is not trusted', () => {
    const impostor = { ...stranger.publicJwk, kid: k1.kid };
    const untrusted = [{ kid: k1.kid, reason: 'listed with another public key than the trusted one' }];
    expect(trustedKeySet({ keys: [impostor] }, pin(k1))).toMatchObject({ keySet: { keys: [], untrusted }, untrusted });
  });

  it('a record by a key the set lists but trust left out is KEY_NOT_TRUSTED; by a key it does not list, UNKNOWN_KEY', () => {
    const record = signRecord({ domain: 'x.example', status: 'verified' }, stranger);
    const { keySet } = trustedKeySet({ keys: [k1.publicJwk, stranger.publicJwk] }, pin(k1));
    expect(verifyRecord(record, keySet)).toMatchObject({ valid: false, code: 'KEY_NOT_TRUSTED', keyId: stranger.kid });
    expect(verifyRecord(signRecord({ domain: 'x.example' }, k2), keySet)).toMatchObject({ valid: false, code: 'UNKNOWN_KEY' });
    expect(verifyRecord(signRecord({ domain: 'x.example' }, k1), keySet)).toMatchObject({ valid: true, keyId: k1.kid });
    // Only trustedKeySet says a key is untrusted: a key set read from elsewhere naming one is not heard,
    // nor is a copy of trustedKeySet's answer (the publisher of a key set never words this verdict).
    const claimed = { keys: [k1.publicJwk], untrusted: [{ kid: stranger.kid, reason: 'says the publisher' }] };
    expect(verifyRecord(record, claimed)).toMatchObject({ valid: false, code: 'UNKNOWN_KEY' });
    expect(verifyRecord(record, JSON.parse(JSON.stringify(keySet)))).toMatchObject({ valid: false, code: 'UNKNOWN_KEY' });
  });

  it('endorsements that are not a list of objects, or a pinned set that is not a key set, are INVALID_KEY_SET', () => {
    expect(() => trustedKeySet({ keys: [], endorsements: {} }, pin(k1))).toThrow(InvalidKeySetError);
    expect(() => trustedKeySet({ keys: [], endorsements: ['x'] }, pin(k1))).toThrow(InvalidKeySetError);
    expect(() => trustedKeySet({ keys: [] }, { nope: true })).toThrow(InvalidKeySetError);
  });
});

describe('mvr verify --trusted-keys', () => {
  it('refuses a record signed by a key the key set lists but nobody trusted endorsed; accepts one signed by a pinned or endorsed key', async () => {
    const p = await makeProject();
    const dir = await tempDir('mvr-trusted-');
    const { record } = await liveRecord(p, GOLD);
    const genuine = (await runCli(['keygen', '--keys', p.keysDir, '--json'])).stdout;
    const rotated = JSON.parse(genuine) as { kid: string; endorsed_by: string };
    expect(rotated.endorsed_by).toBe(p.kid);

    const files = {
      pinned: join(dir, 'pinned.json'),
      keySet: join(dir, 'keys.json'),
      forged: join(dir, 'forged.json'),
      record: join(dir, 'record.json'),
      rotatedKeySet: join(dir, 'rotated-keys.json'),
      rotatedRecord: join(dir, 'rotated.json'),
    };
    await writeFile(files.pinned, await readFile(p.keySetFile, 'utf8'));
    // The key set a bucket writer publishes: the genuine keys, and one of their own.
    const own = newKey();
    const { keys } = JSON.parse(await readFile(p.keySetFile, 'utf8')) as KeySet;
    await writeFile(files.keySet, JSON.stringify({ keys: [...keys, own.publicJwk] }));
    await writeFile(files.forged, JSON.stringify(signRecord(record, own)));
    await writeFile(files.record, JSON.stringify(record));
    // The rotated key, with the endorsement keygen stored in its file, as the next build publishes it.
    const next = loadSigningKey(await readFile(join(p.keysDir, 'signing', `${rotated.kid}.jwk.json`), 'utf8'));
    await writeFile(files.rotatedKeySet, JSON.stringify({ keys: [next.publicJwk, ...keys], endorsements: next.endorsements }));
    await writeFile(files.rotatedRecord, JSON.stringify(signRecord(record, next)));

    const forgedArgs = ['verify', '--file', files.forged, '--key-set', files.keySet, '--trusted-keys', files.pinned];
    const forged = await runCli([...forgedArgs, '--json']);
    expect(JSON.parse(forged.stdout)).toMatchObject({
      valid: false,
      code: 'KEY_NOT_TRUSTED',
      signature: { valid: false, code: 'KEY_NOT_TRUSTED', key_id: own.kid },
      trust: { key_set: 'pinned', key_set_source: files.keySet },
    });
    expect(forged.code).toBe(exitCodeOf('KEY_NOT_TRUSTED'));
    expect(exitCodeOf('KEY_NOT_TRUSTED')).not.toBe(exitCodeOf('UNKNOWN_KEY'));
    const forgedText = await runCli(forgedArgs);
    expect(forgedText.stdout.split('\n')[0]).toMatch(/^INVALID \(KEY_NOT_TRUSTED\): /);
    expect(forgedText.stdout).toContain(own.kid);
    // A key set that does not list the key at all: still UNKNOWN_KEY, the trusted keys or not.
    const unlisted = await runCli(['verify', '--file', files.forged, '--key-set', files.pinned, '--trusted-keys', files.pinned, '--json']);
    expect(JSON.parse(unlisted.stdout)).toMatchObject({ valid: false, code: 'UNKNOWN_KEY' });
    expect(unlisted.code).toBe(exitCodeOf('UNKNOWN_KEY'));
    // Without --trusted-keys, the key set alone vouches for the writer's key (what pinning is for).
    expect((await runCli(['verify', '--file', files.forged, '--key-set', files.keySet])).code).toBe(0);
    expect((await runCli(['verify', '--file', files.record, '--key-set', files.keySet, '--trusted-keys', files.pinned])).code).toBe(0);
    const endorsed = ['verify', '--file', files.rotatedRecord, '--key-set', files.rotatedKeySet, '--trusted-keys', files.pinned];
    expect((await runCli(endorsed)).code).toBe(0);
  });

  it('a pinned file with no usable key is a configuration error naming it', async () => {
    const dir = await tempDir('mvr-trusted-');
    const empty = join(dir, 'empty.json');
    await writeFile(empty, '{"keys":[]}');
    const r = await runCli(['verify', '--file', empty, '--key-set', empty, '--trusted-keys', empty]);
    expect(r.stderr).toContain(`--trusted-keys ${empty}: lists no Ed25519 key`);
    expect(r.code).not.toBe(0);
  });
});
