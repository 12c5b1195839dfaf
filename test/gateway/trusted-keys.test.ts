/**
 * Keys the operator trusts, on a records folder: whoever can write records/ and public/ but holds
 * no signing key cannot get a build served by signing it with a key of their own and listing that
 * key in the key set; a key set with no usable key does not switch unsigned mode on; a rotation by
 * `mvr keygen` (the new key endorsed by the active one) is served, link after link, even once the
 * keys between are retired. On an http(s) origin the keys must come from the operator: without
 * `--trusted-keys` (or `--unsigned`) nothing starts.
 */
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { trustedKeySet, verifyRecord } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { generatePrivateJwk } from '../../core/crypto/signing.ts';
import { CURRENT_LINK } from '../../core/layout.ts';
import { keygen, retireKey } from '../../keyring/signing-keys.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, startTestGateway, type TestGateway, waitForLog } from '../support/gateway.ts';
import { expectProblem, NO_TRUSTED_KEYS } from '../support/gateway-expect.ts';
import { liveRecordBytes } from '../support/packs.ts';
import { build, GOLD, makeProject, NOW, type Project, tempDir } from '../support/project.ts';
import { startStaticOrigin } from '../support/static-origin.ts';
import { poll } from '../support/wait.ts';

afterAll(cleanup);

let builds = 0;
/** The next build of `p`, a minute after the one before (same audits, key and time would be the same build). */
const buildNext = (p: Project, signingKey?: string, keysDir = p.keysDir) => build(p, { now: NOW + ++builds * 60_000, signingKey, keysDir });

const refusal = (g: TestGateway) => waitForLog(g, (l) => l.msg === 'build refused; the build served before (if any) stays served', 10_000);
const health = async (g: TestGateway) => (await g.request('/healthz', { key: null })).json;

/** A build signed by a key no trusted key endorsed, with a key set listing it beside the trusted ones (what a bucket or folder writer can publish). */
async function publishUnendorsedBuild(p: Project): Promise<string> {
  const intruder = generatePrivateJwk();
  await buildNext(p, JSON.stringify(intruder));
  const published = JSON.parse(await readFile(p.keySetFile, 'utf8')) as { keys: { kid: string }[] };
  expect(published.keys.map((k) => k.kid)).toContain(intruder.kid);
  return intruder.kid;
}

describe('a gateway on a records folder trusts the keys it was started with', () => {
  it('keeps serving the previous build when a build signed by an unendorsed key (named by the key set) goes live', async () => {
    const p = await makeProject();
    const pinned = JSON.parse(await readFile(p.keySetFile, 'utf8'));
    const before = await liveRecordBytes(p, GOLD);
    const g = await startTestGateway(p);
    expect((await g.verify(GOLD)).bytes).toEqual(before);
    expect(await waitForLog(g, (l) => typeof l.msg === 'string' && l.msg.startsWith('record keys pinned'))).toMatchObject({ kids: p.kid });

    const intruder = await publishUnendorsedBuild(p);
    expect((await refusal(g)).reason).toMatch(new RegExp(`KEY_NOT_TRUSTED \\(signed by key "${intruder}".*neither pinned nor endorsed`));
    const r = await g.verify(GOLD);
    expect(r.status).toBe(200);
    expect(r.bytes).toEqual(before);
    expect(verifyRecord(r.json, pinned, { domain: GOLD })).toMatchObject({ valid: true, keyId: p.kid });
    expect(await health(g)).toMatchObject({ status: 'degraded', records: { ok: true, refused: expect.any(String) } });
  });

  it('the same with the keys pinned by --trusted-keys, and a later endorsed rotation is served', async () => {
    const p = await makeProject();
    const pinned = JSON.parse(await readFile(p.keySetFile, 'utf8'));
    const g = await startTestGateway(p, { trust: { trustedKeys: pinned } });
    await publishUnendorsedBuild(p);
    await refusal(g);
    expect((await g.verify(GOLD)).json.key_id).toBe(p.kid);

    const k2 = await keygen(p.keysDir);
    await buildNext(p);
    const served = await poll(
      () => g.verify(GOLD),
      (r) => r.json?.key_id === k2,
      { timeoutMs: 10_000 },
    );
    // A client that pinned the first key verifies the new key's records through the endorsement the key set carries.
    const keySet = (await g.request('/.well-known/merchant-verify-keys.json', { key: null })).json;
    expect(verifyRecord(served.value.json, trustedKeySet(keySet, pinned).keySet, { domain: GOLD })).toMatchObject({
      valid: true,
      keyId: k2,
    });
    expect(verifyRecord(served.value.json, pinned, { domain: GOLD })).toMatchObject({ valid: false, code: 'UNKNOWN_KEY' });
  });

  it('follows the chain k1 -> k2 -> k3 with k1 and k2 retired; a key set with no usable key does not switch unsigned mode on', async () => {
    const p = await makeProject();
    const k1 = p.kid!;
    const g = await startTestGateway(p, { trust: { trustedKeys: JSON.parse(await readFile(p.keySetFile, 'utf8')) } });
    const k2 = await keygen(p.keysDir);
    const k3 = await keygen(p.keysDir);
    await retireKey(p.keysDir, k1);
    await retireKey(p.keysDir, k2);
    await build(p, { now: NOW + ++builds * 60_000, keep: 1 });
    const keySet = JSON.parse(await readFile(p.keySetFile, 'utf8'));
    expect(keySet.keys.map((k: { kid: string }) => k.kid)).toEqual([k3]);
    await poll(
      () => g.verify(GOLD),
      (r) => r.json?.key_id === k3,
      { timeoutMs: 10_000 },
    );

    // An unsigned build (its key set lists no key), then a key set listing only a key of another
    // type: refused each time, never served as unsigned records.
    const noKeys = await tempDir('mvr-no-keys-');
    await buildNext(p, undefined, noKeys);
    expect(JSON.parse(await readFile(p.keySetFile, 'utf8'))).toEqual({ keys: [] });
    expect((await refusal(g)).reason).toMatch(/does not verify: UNSIGNED/);
    // The refusal and the key set's reload are two steps of a refresh: the answer changes once both ran.
    expectProblem(
      (
        await poll(
          () => g.verify(GOLD),
          (r) => r.status === 503,
          { timeoutMs: 10_000 },
        )
      ).value,
      503,
      'STORE_UNAVAILABLE',
    );
    await writeFile(p.keySetFile, JSON.stringify({ keys: [{ kty: 'RSA', kid: 'other', n: 'AQAB', e: 'AQAB' }] }));
    await poll(
      async () => g.logs.filter((l) => typeof l.reason === 'string' && /does not verify: UNSIGNED/.test(l.reason)).length,
      (n) => n >= 2,
      { timeoutMs: 10_000 },
    );
    expectProblem(await g.verify(GOLD), 503, 'STORE_UNAVAILABLE');
  });
});

describe('a gateway on an http origin trusts only the keys its operator gives', () => {
  it('serve and mcp refuse to start without --trusted-keys (INVALID_CONFIG, exit 2), before reading the origin', async () => {
    const p = await makeProject({ build: false });
    const where = ['--records', 'http://127.0.0.1:9/records/', '--public', p.publicDir];
    for (const command of [['serve', '--api-keys', p.apiKeysFile], ['mcp']]) {
      const r = await runCli([...command, ...where]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(NO_TRUSTED_KEYS);
      expect(r.stderr).toContain('--records http://127.0.0.1:9/records/');
    }
  });

  it('with --unsigned and no --trusted-keys it trusts no key: a signed build is refused, never its key set pinned', async () => {
    const p = await makeProject();
    const origin = await startStaticOrigin(await realpath(join(p.recordsDir, CURRENT_LINK)));
    try {
      const g = await startTestGateway(p, { records: { url: origin.url }, trust: { unsigned: true } });
      expect((await refusal(g)).reason).toMatch(new RegExp(`KEY_NOT_TRUSTED \\(signed by key "${p.kid}"`));
      expectProblem(await g.verify(GOLD), 503, 'STORE_UNAVAILABLE');
    } finally {
      await origin.stop();
    }
  });
});
