/**
 * A key set that gains keys of another type (a post-quantum key during a migration, an RSA or X25519
 * key) keeps working for the gateway that reads it and for the clients that fetch it; a private
 * member anywhere in it still refuses it whole. A real build, a real gateway, the published file
 * rewritten in place as an operator would.
 */

import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { KEY_SET_PATH, verifyRecord } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeySetClient, verifyRecordWithClient } from '../../clients/key-set-client.ts';
import { KeyTrust } from '../../core/rules/key-trust.ts';
import { KeySetSource, keySetFile } from '../../storage/key-set-source.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { GOLD, makeProject, type Project } from '../support/project.ts';
import { waitFor } from '../support/wait.ts';

const FOREIGN = [
  { kty: 'AKP', alg: 'ML-DSA-65', pub: randomBytes(1952).toString('base64url'), kid: 'pq-2027', use: 'sig' },
  { kty: 'RSA', n: randomBytes(256).toString('base64url'), e: 'AQAB', kid: 'rsa-1', alg: 'RS256' },
  { kty: 'OKP', crv: 'X25519', x: randomBytes(32).toString('base64url'), kid: 'x25519-1' },
];

let project: Project;
let g: TestGateway;
let published: { keys: Record<string, unknown>[] };

beforeAll(async () => {
  project = await makeProject();
  published = JSON.parse(await readFile(project.keySetFile, 'utf8'));
  g = await startTestGateway(project);
});
afterAll(cleanup);

async function publish(keySet: unknown): Promise<string> {
  const text = JSON.stringify(keySet);
  await writeFile(project.keySetFile, text);
  return text;
}

describe('a key set with keys of other types', () => {
  it("the gateway's key set reader keeps our key and skips the others", async () => {
    await publish({ keys: [FOREIGN[0], ...published.keys, ...FOREIGN.slice(1)] });
    const source = new KeySetSource(keySetFile(project.keySetFile), new KeyTrust());
    await source.refresh();
    expect(source.state()).toEqual({ ok: true, keys: 1, error: null });
    expect(source.get().keySet.keys.map((k) => k.kid)).toEqual([project.kid]);
  });

  it('a running gateway picks it up, serves it as published, and still serves verified records', async () => {
    const text = await publish({ keys: [FOREIGN[0], ...published.keys, ...FOREIGN.slice(1)] });
    await waitFor(async () => (await g.request(KEY_SET_PATH, { key: null })).text === text, 'the new key set served');
    const record = await g.verify(GOLD);
    expect(record.status).toBe(200);
    // The client verifies the served record against the served set, foreign keys and all.
    const served = (await g.request(KEY_SET_PATH, { key: null })).json;
    expect(verifyRecord(record.json, served, { domain: GOLD })).toMatchObject({ valid: true, keyId: project.kid });
    // And the caching client reads it the same way.
    const client = new KeySetClient({ url: g.url });
    expect((await client.get()).keys.map((k) => k.kid)).toEqual([project.kid]);
    expect(await verifyRecordWithClient(record.json, client, { domain: GOLD })).toMatchObject({ valid: true });
  });

  it('a private member on a key of another type still refuses the set: the gateway serves no record until it is fixed', async () => {
    await publish({ keys: [...published.keys, { ...FOREIGN[1], d: randomBytes(256).toString('base64url') }] });
    await waitFor(async () => (await g.verify(GOLD)).status === 503, 'the leaked key set refused');
    const refused = await g.verify(GOLD);
    expect(refused.json).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const source = new KeySetSource(keySetFile(project.keySetFile), new KeyTrust());
    await source.refresh();
    expect(source.state().error).toMatch(/keys\[1\] is a private key \(has "d"\)/);

    await publish(published);
    await waitFor(async () => (await g.verify(GOLD)).status === 200, 'the fixed key set picked up');
  });

  it('a malformed Ed25519 key (a small-order x) refuses the set: it is our own type published wrong', async () => {
    const source = new KeySetSource(keySetFile(project.keySetFile), new KeyTrust());
    await publish({
      keys: [...published.keys, { kty: 'OKP', crv: 'Ed25519', x: 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', kid: 'weak' }],
    });
    await source.refresh();
    expect(source.state()).toMatchObject({
      ok: false,
      error: expect.stringMatching(/keys\[1\]\.x: the public key is a point of small order/),
    });
    await publish(published);
  });
});
