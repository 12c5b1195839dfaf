/**
 * KeySetClient against the real gateway: the key set is cached as its Cache-Control says and
 * revalidated with its ETag; a rotation (keygen B + rebuild) is picked up by exactly one refetch
 * when a record names the new key; a flood of made-up key ids costs at most one extra request
 * per cooldown; concurrent callers share one request.
 */
import { randomBytes } from 'node:crypto';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FetchFailedError, KeySetClient, verifyRecordWithClient } from '../../clients/key-set-client.ts';
import { keygen } from '../../keyring/signing-keys.ts';
import { cleanup, requestsTo, startTestGateway, type TestGateway, waitForLog } from '../support/gateway.ts';
import { liveRecord, type StoredRecord } from '../support/outputs.ts';
import { freePort as closedPort } from '../support/ports.ts';
import { build, GOLD, makeProject, type Project } from '../support/project.ts';
import { waitFor } from '../support/wait.ts';

let project: Project;
let gw: TestGateway;
let recordA: StoredRecord;
let kidA: string;

beforeAll(async () => {
  project = await makeProject();
  kidA = project.kid!;
  gw = await startTestGateway(project);
  recordA = await liveRecord(project, GOLD);
});
afterAll(cleanup);

/** A valid record of A with its key_id replaced by a random, well-formed, unknown one. */
function withRandomKid(): Record<string, unknown> {
  return { ...recordA.record, key_id: randomBytes(32).toString('base64url') };
}

const keySetRequests = () => requestsTo(gw, KEY_SET_PATH).length;

describe('KeySetClient: caching and revalidation', () => {
  it('takes a base URL or the full key set URL', () => {
    expect(new KeySetClient({ url: gw.url }).url).toBe(`${gw.url}${KEY_SET_PATH}`);
    expect(new KeySetClient({ url: `${gw.url}/` }).url).toBe(`${gw.url}${KEY_SET_PATH}`);
    expect(new KeySetClient({ url: `${gw.url}${KEY_SET_PATH}` }).url).toBe(`${gw.url}${KEY_SET_PATH}`);
  });

  it('serves from cache while fresh (max-age), then revalidates with If-None-Match and gets 304', async () => {
    let clock = 1_000_000;
    const client = new KeySetClient({ url: gw.url, now: () => clock });
    const before = requestsTo(gw, KEY_SET_PATH).length;
    const first = await client.get();
    expect(first.keys.map((k) => k.kid)).toEqual([kidA]);
    expect(client.fetches).toBe(1);

    // The gateway says public, max-age=300: 299 s later the cache is still fresh.
    clock += 299_000;
    expect(await client.get()).toBe(first);
    expect(client.fetches).toBe(1);

    // Past max-age: one conditional request, answered 304, the same key set kept.
    clock += 2_000;
    expect(await client.get()).toEqual(first);
    expect(client.fetches).toBe(2);
    const seen = requestsTo(gw, KEY_SET_PATH).slice(before);
    expect(seen.map((r) => r.status)).toEqual([200, 304]);

    // The 304 made it fresh again.
    clock += 10_000;
    await client.get();
    expect(client.fetches).toBe(2);
  });

  it('concurrent get() calls share one request', async () => {
    const client = new KeySetClient({ url: gw.url });
    const before = keySetRequests();
    const sets = await Promise.all(Array.from({ length: 20 }, () => client.get()));
    expect(client.fetches).toBe(1);
    expect(new Set(sets).size).toBe(1);
    await waitFor(() => keySetRequests() === before + 1, 'the request log line');
    expect(keySetRequests()).toBe(before + 1);
  });

  it('fails with FETCH_FAILED when the key set cannot be fetched', async () => {
    const down = new KeySetClient({ url: `http://127.0.0.1:${await closedPort()}`, timeoutMs: 2000 });
    await expect(down.get()).rejects.toBeInstanceOf(FetchFailedError);
    await expect(down.get()).rejects.toMatchObject({ code: 'FETCH_FAILED' });
    const notFound = new KeySetClient({ url: `${gw.url}/no-such-keys.json` });
    await expect(notFound.get()).rejects.toMatchObject({ code: 'FETCH_FAILED', status: 404 });
  });
});

describe('KeySetClient: unknown key ids and rotation', () => {
  // Clients that cached the key set while only key A was published.
  let sequential: KeySetClient;
  let concurrent: KeySetClient;
  let kidB: string;
  let recordB: StoredRecord;

  beforeAll(async () => {
    sequential = new KeySetClient({ url: gw.url });
    concurrent = new KeySetClient({ url: gw.url });
    expect((await sequential.get()).keys.map((k) => k.kid)).toEqual([kidA]);
    expect((await concurrent.get()).keys.map((k) => k.kid)).toEqual([kidA]);
    expect(await verifyRecordWithClient(recordA.record, sequential, { domain: GOLD })).toMatchObject({ valid: true, keyId: kidA });
    expect(sequential.fetches).toBe(1);

    // Rotate: key B becomes active, A stays published, the records are re-signed by B.
    kidB = await keygen(project.keysDir);
    await build(project);
    recordB = await liveRecord(project, GOLD);
    expect(recordB.record.key_id).toBe(kidB);
    // Wait until the gateway serves the new key set (it polls the file).
    await waitFor(async () => {
      const res = await fetch(`${gw.url}${KEY_SET_PATH}`);
      const body = (await res.json()) as { keys: { kid: string }[] };
      return body.keys.some((k) => k.kid === kidB);
    }, 'the rotated key set');
  });

  it('verifies a record signed by the new key through exactly one refetch', async () => {
    expect(sequential.fetches).toBe(1);
    const result = await verifyRecordWithClient(recordB.record, sequential, { domain: GOLD });
    expect(result).toMatchObject({ valid: true, keyId: kidB, status: 'verified' });
    expect(sequential.fetches).toBe(2);
    expect((await sequential.get()).keys.map((k) => k.kid).sort()).toEqual([kidA, kidB].sort());
    // Now both keys are cached: neither record costs a request.
    expect(await verifyRecordWithClient(recordA.record, sequential, { domain: GOLD })).toMatchObject({ valid: true, keyId: kidA });
    expect(await verifyRecordWithClient(recordB.record, sequential, { domain: GOLD })).toMatchObject({ valid: true, keyId: kidB });
    expect(sequential.fetches).toBe(2);
  });

  it('a flood of 50 records with random unknown key ids causes one extra fetch within the cooldown', async () => {
    // The client's clock stands still: the whole flood falls within one cooldown, however slow the machine.
    const client = new KeySetClient({ url: gw.url, now: () => 7_000_000 });
    await client.get();
    expect(client.fetches).toBe(1);
    const before = keySetRequests();

    const parallel = await Promise.all(Array.from({ length: 50 }, () => verifyRecordWithClient(withRandomKid(), client)));
    for (const r of parallel) expect(r).toMatchObject({ valid: false, code: 'UNKNOWN_KEY' });
    expect(client.fetches).toBe(2);

    for (let i = 0; i < 50; i++) {
      expect(await verifyRecordWithClient(withRandomKid(), client)).toMatchObject({ valid: false, code: 'UNKNOWN_KEY' });
    }
    expect(client.fetches).toBe(2);
    // The gateway saw as many: its access log is written asynchronously, so a last request marks
    // its end, and every earlier request's line is in once that one's is.
    await gw.request('/end-of-flood', { key: null });
    await waitForLog(gw, (l) => l.msg === 'request' && l.path === '/end-of-flood');
    expect(keySetRequests() - before).toBe(1);
  });

  it('allows one more refetch for an unknown key id only after the cooldown', async () => {
    let clock = 5_000_000;
    const client = new KeySetClient({ url: gw.url, now: () => clock, unknownKeyCooldownMs: 30_000 });
    await client.get();
    await verifyRecordWithClient(withRandomKid(), client);
    expect(client.fetches).toBe(2);
    clock += 29_000;
    await verifyRecordWithClient(withRandomKid(), client);
    expect(client.fetches).toBe(2);
    clock += 2_000;
    await verifyRecordWithClient(withRandomKid(), client);
    expect(client.fetches).toBe(3);
    // A known kid never triggers a refetch, cooldown or not.
    await verifyRecordWithClient(recordB.record, client);
    expect(client.fetches).toBe(3);
  });

  it('concurrent verifications of records signed by the new key all pass, sharing one refetch', async () => {
    expect(concurrent.fetches).toBe(1);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => verifyRecordWithClient(recordB.record, concurrent, { domain: GOLD })),
    );
    expect(concurrent.fetches).toBe(2);
    for (const r of results) expect(r).toMatchObject({ valid: true, keyId: kidB });
  });
});
