/**
 * A week of the daily refresh (`mvr log witness`, the workflow's daily job) as an operator runs
 * it, every witness's clock moved a day at a time: a policy that needs all three witnesses, c down
 * on days 2 and 3, and on day 3 a build short of its quorum (exit 19, the previous build kept
 * live) whose newer checkpoint a and b cosigned. The job fails on exactly days 2 and 3
 * (NOT_FRESHLY_WITNESSED: the served checkpoint keeps only earlier cosignatures), and from day 4,
 * with c back, what the gateway serves (record proofs, absence proofs, /log/checkpoint) carries a
 * fresh cosignature of every witness, although a and b refuse the live build's own, smaller
 * checkpoint since they saw the newer one.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parsePolicy, verifyAbsence, verifyLogProof } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTlogProof } from '#shared';
import { runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { gatewayOver, vkeyFile } from '../support/logged-project.ts';
import { GOLD, removeTempDirs, UNAUDITED } from '../support/project.ts';
import { checkpointSize, cosignatureTimes, type WitnessedProject, witnessedProject } from '../support/witnessed-project.ts';

const DAY = 86_400_000;
const DAY0 = Date.parse('2026-11-01T00:00:00Z');
const HOUR = 3_600_000;
let w: WitnessedProject;
let g: TestGateway;
let policy: string;
let vkey: string;
let keySet: unknown;

beforeAll(async () => {
  w = await witnessedProject('group all-three 3 a b c\nquorum all-three');
  w.setClock(DAY0);
  policy = await w.policyWith();
  const run = await w.build(new Date(DAY0).toISOString());
  if (run.code !== 0) throw new Error(run.stdout + run.stderr);
  g = await gatewayOver(w.p);
  vkey = (await readFile(vkeyFile(w.p), 'utf8')).trim();
  keySet = JSON.parse(await readFile(w.p.keySetFile, 'utf8'));
});
afterAll(async () => {
  await cleanup();
  await w.close();
  await removeTempDirs();
});

/** The daily job of day `day`: the witnesses down that day, an optional build first, then the refresh. */
async function day(
  n: number,
  down: string[],
  buildToo = false,
): Promise<{ code: number; build?: number | null; json: Record<string, unknown> }> {
  w.setClock(DAY0 + n * DAY);
  await w.policyWith(down);
  const build = buildToo ? (await w.build(new Date(DAY0 + n * DAY).toISOString())).code : undefined;
  const run = await runCli(['log', 'witness', '--policy', w.policyFile, '--records', w.p.recordsDir, '--public', w.p.publicDir, '--json']);
  return { code: run.code ?? -1, ...(build === undefined ? {} : { build }), json: JSON.parse(run.stdout) as Record<string, unknown> };
}

/** What the gateway serves, checked as a reader with the policy and a maximum age of an hour would at `now`. */
async function served(now: number) {
  const options = { policy: parsePolicy(policy), maxAgeMs: HOUR, now };
  const record = await g.verify(GOLD);
  const proof = (await g.request(`/v1/proof?domain=${GOLD}`)).text;
  const absence = (await g.request(`/v1/absence?domain=${UNAUDITED}`)).json;
  return {
    record: verifyLogProof(record.json, proof, { vkey }, options),
    absence: verifyAbsence(absence, UNAUDITED, keySet, { log: { vkey }, ...options }),
    proofCheckpoint: parseTlogProof(proof).checkpoint,
    head: (await g.request('/log/checkpoint')).text,
  };
}

describe.sequential('a week of daily refreshes', () => {
  it('fails on exactly the days the served checkpoint got no fresh quorum, and serves every witness again once back', async () => {
    const liveSize = checkpointSize(await readFile(join(w.p.recordsDir, 'current', 'log-checkpoint'), 'utf8'));
    const week = [
      await day(1, []),
      await day(2, ['c']),
      await day(3, ['c'], true),
      await day(4, []),
      await day(5, []),
      await day(6, []),
      await day(7, []),
    ];
    // Day 3's build: a and b cosigned its checkpoint, c could not: short of the quorum, not live.
    expect(week[2]!.build).toBe(19);
    expect(week.map((d) => d.code)).toEqual([0, 20, 20, 0, 0, 0, 0]);
    expect(week[1]!.json).toMatchObject({
      ok: false,
      code: 'NOT_FRESHLY_WITNESSED',
      witnesses: [
        { witness: 'a', ok: true },
        { witness: 'b', ok: true },
        { witness: 'c', ok: false, code: 'WITNESS_UNAVAILABLE' },
      ],
    });
    // Day 3: the served checkpoint is still the live build's own; a and b saw the newer one.
    expect(week[2]!.json).toMatchObject({ ok: false, code: 'NOT_FRESHLY_WITNESSED', size: liveSize });
    expect((week[2]!.json.witnesses as { witness: string; message?: string }[])[0]!.message).toMatch(/larger than this checkpoint/);
    // Day 4 on: the newer head, cosigned by all three, is what the live build's answers are proven against.
    expect(week[3]!.json).toMatchObject({ ok: true, witnesses: [{ ok: true }, { ok: true }, { ok: true }] });
    expect(week[3]!.json.size as number).toBeGreaterThan(liveSize);

    const now = DAY0 + 7 * DAY;
    const answers = await served(now);
    expect(answers.record).toMatchObject({ valid: true, witnessedAt: now });
    expect(answers.absence).toMatchObject({ valid: true, witnessedAt: now });
    expect(cosignatureTimes(answers.proofCheckpoint, policy, now)).toEqual({ a: now, b: now, c: now });
    expect(answers.head).toBe(answers.proofCheckpoint);
    // The live build's own checkpoint is kept as it was built (its statement is its last entry).
    expect(checkpointSize(await readFile(join(w.p.recordsDir, 'current', 'log-checkpoint'), 'utf8'))).toBe(liveSize);
  });
});
