/**
 * The witness client against real witnesses (`mvr witness` in process) and against a fake
 * witness that answers as c2sp.org/tlog-witness words it (a 409 with its size, a 500, silence),
 * an external party's behaviour: each failure is reported by name, the others go on.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parsePolicy, verifyWitnessedCheckpoint } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectCosignatures, submitCheckpoint } from '../../witness/client/submit.ts';
import { parseAddCheckpoint } from '../../witness/protocol.ts';
import { freePort } from '../support/ports.ts';
import { policyText, startTestWitness, type TestWitness, testLog } from '../support/witness.ts';

const log = testLog();
let up: TestWitness[] = [];
let fake: Server;
let fakeUrl: string;
/** What the fake witness answers next, and the old sizes it was sent. */
const fakeScript: { status: number; body: string; type?: string }[] = [];
const fakeSeen: number[] = [];

beforeAll(async () => {
  up = await Promise.all(['a', 'b', 'c'].map((n) => startTestWitness(n, [log])));
  fake = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      fakeSeen.push(parseAddCheckpoint(body).oldSize);
      const next = fakeScript.shift();
      if (!next) return; // silence: the client's timeout ends it
      res.writeHead(next.status, { 'Content-Type': next.type ?? 'text/plain' }).end(next.body);
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await Promise.all(up.map((w) => w.close()));
  fake.closeAllConnections();
  await new Promise((resolve) => fake.close(resolve));
});

const entry = (w: TestWitness, name: string) => ({ name, vkey: w.key.vkey, url: w.url });
const proofTo = (size: number) => (from: number) => log.proof(from, size);

describe('submitCheckpoint', () => {
  it('learns the witness size from a 409 and retries once with the proof from it', async () => {
    const [a] = up as [TestWitness];
    const policy = parsePolicy(policyText(log, [entry(a, 'a')], 'quorum a'));
    expect(await submitCheckpoint(policy.witnesses[0]!, log.checkpoint(6), proofTo(6), { timeoutMs: 5000 })).toMatchObject({
      witness: 'a',
      ok: true,
    });
    const second = await submitCheckpoint(policy.witnesses[0]!, log.checkpoint(11), proofTo(11), { timeoutMs: 5000 });
    expect(second).toMatchObject({ witness: 'a', ok: true });
    expect(verifyWitnessedCheckpoint(log.checkpoint(11) + (second as { line: string }).line, policy, { now: a.now.ms }).valid).toBe(true);
  });

  it('reports a witness that does not witness the log (404) and one whose proof fails (422) as refusals', async () => {
    const stranger = await startTestWitness('stranger', [testLog('elsewhere.test/log')]);
    try {
      const policy = parsePolicy(policyText(log, [entry(stranger, 's')], 'quorum s'));
      expect(await submitCheckpoint(policy.witnesses[0]!, log.checkpoint(3), proofTo(3), { timeoutMs: 5000 })).toMatchObject({
        witness: 's',
        ok: false,
        code: 'WITNESS_REFUSED',
        status: 404,
      });
    } finally {
      await stranger.close();
    }
    const [a] = up as [TestWitness];
    const policy = parsePolicy(policyText(log, [entry(a, 'a')], 'quorum a'));
    const wrongProof = async () => [new Uint8Array(32)];
    expect(await submitCheckpoint(policy.witnesses[0]!, log.checkpoint(12), wrongProof, { timeoutMs: 5000 })).toMatchObject({
      ok: false,
      code: 'WITNESS_REFUSED',
      status: 422,
    });
  });

  it('against a witness as the spec words it: 409 with its size, then 500; silence; a closed port', async () => {
    const policy = parsePolicy(policyText(log, [{ name: 'f', vkey: up[0]!.key.vkey, url: `${fakeUrl}/prefix/` }], 'quorum f'));
    const f = policy.witnesses[0]!;
    fakeScript.push({ status: 409, body: '4\n', type: 'text/x.tlog.size' }, { status: 500, body: 'oops' });
    fakeSeen.length = 0;
    expect(await submitCheckpoint(f, log.checkpoint(9), proofTo(9), { timeoutMs: 5000 })).toMatchObject({
      witness: 'f',
      ok: false,
      code: 'WITNESS_UNAVAILABLE',
      status: 500,
    });
    expect(fakeSeen).toEqual([0, 4]);
    fakeScript.push({ status: 409, body: 'twelve\n', type: 'text/x.tlog.size' });
    expect(await submitCheckpoint(f, log.checkpoint(9), proofTo(9), { timeoutMs: 5000 })).toMatchObject({
      ok: false,
      code: 'WITNESS_REFUSED',
      status: 409,
    });
    fakeScript.push({ status: 200, body: '\u2014 f.test/witness AAAAAAAA\n' });
    expect(await submitCheckpoint(f, log.checkpoint(9), proofTo(9), { timeoutMs: 5000 })).toMatchObject({
      ok: false,
      code: 'WITNESS_REFUSED',
      status: 200,
    });
    expect(await submitCheckpoint(f, log.checkpoint(9), proofTo(9), { timeoutMs: 200 })).toMatchObject({
      ok: false,
      code: 'WITNESS_UNAVAILABLE',
      status: null,
      message: expect.stringMatching(/within 200 ms/),
    });
    fakeScript.push({ status: 409, body: '30\n', type: 'text/x.tlog.size' });
    expect(await submitCheckpoint(f, log.checkpoint(9), proofTo(9), { timeoutMs: 5000 })).toMatchObject({
      ok: false,
      code: 'WITNESS_REFUSED',
      status: 409,
      message: expect.stringMatching(/larger than this checkpoint's 9/),
    });
    const closed = { ...f, url: `http://127.0.0.1:${await freePort()}` };
    expect(await submitCheckpoint(closed, log.checkpoint(9), proofTo(9), { timeoutMs: 5000 })).toMatchObject({
      ok: false,
      code: 'WITNESS_UNAVAILABLE',
      message: expect.stringMatching(/could not be reached/),
    });
  });
});

describe('collectCosignatures', () => {
  it('with three witnesses and quorum 2: two up meet it, one does not; the collected checkpoint verifies', async () => {
    const [, b, c] = up as [TestWitness, TestWitness, TestWitness];
    const down = `http://127.0.0.1:${await freePort()}`;
    const text = policyText(
      log,
      [entry(b, 'b'), entry(c, 'c'), { name: 'd', vkey: up[0]!.key.vkey, url: down }],
      'group two 2 b c d\nquorum two',
    );
    const policy = parsePolicy(text);
    const two = await collectCosignatures(policy, log.checkpoint(20), proofTo(20), { timeoutMs: 5000 });
    expect(two.quorum).toBe(true);
    expect(two.witnesses.map((s) => [s.witness, s.ok])).toEqual([
      ['b', true],
      ['c', true],
      ['d', false],
    ]);
    expect(verifyWitnessedCheckpoint(two.checkpoint, policy, { now: b.now.ms })).toMatchObject({
      valid: true,
      cosigners: [{ witness: 'b' }, { witness: 'c' }],
    });

    const onlyB = parsePolicy(
      policyText(
        log,
        [entry(b, 'b'), { name: 'c', vkey: c.key.vkey, url: down }, { name: 'd', vkey: up[0]!.key.vkey, url: down }],
        'group two 2 b c d\nquorum two',
      ),
    );
    const one = await collectCosignatures(onlyB, log.checkpoint(25), proofTo(25), { timeoutMs: 5000, oldSizes: new Map([['b', 20]]) });
    expect(one.quorum).toBe(false);
    expect(verifyWitnessedCheckpoint(one.checkpoint, onlyB, { now: b.now.ms })).toMatchObject({ valid: false, code: 'NOT_WITNESSED' });
  });
});
