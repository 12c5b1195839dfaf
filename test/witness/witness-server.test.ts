/**
 * `mvr witness`'s add-checkpoint from the outside: real HTTP to the server on a loopback port,
 * real log and witness keys, and the answers c2sp.org/tlog-witness prescribes.
 */

import { parsePolicy, verifyWitnessedCheckpoint } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAddCheckpoint } from '../../witness/protocol.ts';
import { originHash } from '../../witness/server/state.ts';
import { policyText, startTestWitness, type TestWitness, testLog } from '../support/witness.ts';

const log = testLog();
const other = testLog('other.test/log');
let witness: TestWitness;

beforeAll(async () => {
  witness = await startTestWitness('w1', [log]);
});
afterAll(() => witness.close());

async function add(oldSize: number, proof: Uint8Array[], checkpoint: string) {
  const res = await fetch(`${witness.url}/add-checkpoint`, { method: 'POST', body: formatAddCheckpoint({ oldSize, proof, checkpoint }) });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

describe('add-checkpoint', () => {
  it('cosigns a first checkpoint from size 0, then one that extends it with a proof; the cosignature verifies under a policy', async () => {
    const first = await add(0, [], log.checkpoint(5));
    expect(first.status).toBe(200);
    expect(first.body).toMatch(/^\u2014 w1\.test\/witness \S+\n$/u);
    const next = await add(5, await log.proof(5, 12), log.checkpoint(12));
    expect(next.status).toBe(200);
    const policy = parsePolicy(policyText(log, [{ name: 'w1', vkey: witness.key.vkey, url: witness.url }], 'quorum w1'));
    const result = verifyWitnessedCheckpoint(log.checkpoint(12) + next.body, policy, { now: witness.now.ms });
    expect(result).toMatchObject({ valid: true, witnessedAt: Math.floor(witness.now.ms / 1000) * 1000 });
  });

  it('answers 409 with its size (text/x.tlog.size) when old is not the size it cosigned', async () => {
    const res = await add(3, await log.proof(3, 14), log.checkpoint(14));
    expect(res).toEqual({ status: 409, type: 'text/x.tlog.size', body: '12\n' });
  });

  it('answers 422 for a proof that does not verify, and keeps its size', async () => {
    const proof = await log.proof(12, 14);
    proof[0] = new Uint8Array(32);
    expect((await add(12, proof, log.checkpoint(14))).status).toBe(422);
    expect((await add(12, [new Uint8Array(32)], log.checkpoint(12))).status).toBe(422);
    expect((await add(0, [], log.checkpoint(14))).body).toBe('12\n');
  });

  it('answers 403 for a checkpoint the log did not sign, 404 for a log it does not witness, 400 for an old size above the checkpoint', async () => {
    const forged = log
      .checkpoint(14)
      .replace(/\n\n\u2014 .*\n$/u, `\n\n${other.checkpoint(14).split('\n\n')[1]!.replace('other.test/log', 'log.test/log')}`);
    expect((await add(12, await log.proof(12, 14), forged)).status).toBe(403);
    // The log's own key name and ID, with a signature that does not verify: a malformed note, refused too.
    const badSignature = log
      .checkpoint(14)
      .replace(/(\u2014 \S+ .{10})(.)/u, (_m, head: string, c: string) => head + (c === 'A' ? 'B' : 'A'));
    expect((await add(12, await log.proof(12, 14), badSignature)).status).toBe(403);
    expect((await add(0, [], other.checkpoint(3))).status).toBe(404);
    expect((await add(20, [], log.checkpoint(14))).status).toBe(400);
    expect((await add(0, [], 'not a checkpoint\n')).status).toBe(400);
  });

  it('re-cosigns the same checkpoint with a later timestamp (a refresh)', async () => {
    witness.now.ms += 3600_000;
    const again = await add(12, [], log.checkpoint(12));
    expect(again.status).toBe(200);
    const policy = parsePolicy(policyText(log, [{ name: 'w1', vkey: witness.key.vkey, url: witness.url }], 'quorum w1'));
    expect(verifyWitnessedCheckpoint(log.checkpoint(12) + again.body, policy, { now: witness.now.ms })).toMatchObject({
      valid: true,
      witnessedAt: Math.floor(witness.now.ms / 1000) * 1000,
    });
  });

  it('never rolls back under concurrent submissions: every size that was cosigned was the largest at its time', async () => {
    const sizes = [15, 16, 17, 18, 19, 20, 21, 22];
    const answers = await Promise.all(
      sizes.map(async (size) => ({ size, res: await add(12, await log.proof(12, size), log.checkpoint(size)) })),
    );
    // Only the first to take the lock extends 12; the others learn the new size.
    expect(answers.filter((a) => a.res.status === 200)).toHaveLength(1);
    const won = answers.find((a) => a.res.status === 200)!.size;
    for (const a of answers.filter((x) => x.res.status !== 200)) expect(a.res).toMatchObject({ status: 409, body: `${won}\n` });
    // Many clients, each retrying from the size it learns, in parallel: the stored size only grows.
    const results = await Promise.all(
      [30, 25, 35, 28, 40].map(async (size) => {
        let res = await add(0, [], log.checkpoint(size));
        for (let i = 0; i < 10 && res.status === 409; i++) {
          const at = Number(res.body.trim());
          if (at > size) break;
          res = await add(at, at === size ? [] : await log.proof(at, size), log.checkpoint(size));
        }
        return res;
      }),
    );
    expect(results.filter((r) => r.status === 200).length).toBeGreaterThan(0);
    expect((await add(0, [], log.checkpoint(40))).body).toBe('40\n');
    const stored = await witness.state.readByHash(originHash('log.test/log'));
    expect(stored?.size).toBe(40);
  });

  it('serves the latest cosigned checkpoint at /<origin hash>/checkpoint, 404 for a log it never cosigned', async () => {
    const res = await fetch(`${witness.url}/${originHash('log.test/log')}/checkpoint`);
    expect(res.status).toBe(200);
    const policy = parsePolicy(policyText(log, [{ name: 'w1', vkey: witness.key.vkey, url: witness.url }], 'quorum w1'));
    expect(verifyWitnessedCheckpoint(await res.text(), policy, { now: witness.now.ms })).toMatchObject({
      valid: true,
      checkpoint: { size: 40 },
    });
    expect((await fetch(`${witness.url}/${originHash('other.test/log')}/checkpoint`)).status).toBe(404);
  });

  it('keeps its state across a restart (same folder)', async () => {
    await witness.close();
    const again = await startTestWitness('w1b', [log], witness.state.dir);
    try {
      const res = await fetch(`${again.url}/add-checkpoint`, {
        method: 'POST',
        body: formatAddCheckpoint({ oldSize: 0, proof: [], checkpoint: log.checkpoint(40) }),
      });
      expect(await res.text()).toBe('40\n');
    } finally {
      await again.close();
    }
  });
});
