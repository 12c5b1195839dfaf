/**
 * An absence proof carries the live checkpoint's current cosignatures, as a record proof does: a
 * gateway serving a witnessed build, whose checkpoint the log's refresh (what `mvr log witness`
 * runs) cosigns again a day later, gives with its next absence proof the new cosignatures, with
 * no restart; under a verifier's maximum age of an hour the proof it gave before fails and the new
 * one holds (the verifier's clock injected, nothing waits).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parsePolicy, verifyAbsence } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTlogProof } from '#shared';
import { BUILD_CHECKPOINT_FILE, CURRENT_LINK } from '../../core/layout.ts';
import { type BuildWitness, buildPolicy, cosignBuild, logVkeyOf, startBuildWitnesses } from '../support/cosign-build.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { gatewayOver, loggedProject, NOV } from '../support/logged-project.ts';
import { build, GOLD, type Project, removeTempDirs } from '../support/project.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NEVER = 'never-audited-fresh.example';
const T0 = NOV + HOUR;
let p: Project;
let g: TestGateway;
let witnesses: BuildWitness[];
let policy: string;
let vkey: string;
let keySet: unknown;

beforeAll(async () => {
  p = await loggedProject();
  await build(p, { now: NOV });
  witnesses = await startBuildWitnesses(p, ['a', 'b', 'c'], T0);
  policy = await buildPolicy(p, witnesses, 'group two 2 a b c\nquorum two');
  await cosignBuild(p, policy);
  g = await gatewayOver(p);
  vkey = (await logVkeyOf(p)).trim();
  keySet = JSON.parse(await readFile(p.keySetFile, 'utf8'));
});
afterAll(async () => {
  for (const w of witnesses) await w.close();
  await cleanup();
  await removeTempDirs();
});

const absence = async () => {
  const r = await g.request(`/v1/absence?domain=${NEVER}`);
  expect(r.status, r.text).toBe(200);
  return r.json as { statement_proof: string };
};
/** The verdict on an absence proof at `now` under the policy and a maximum age of an hour. */
const verdict = (proof: unknown, now: number) =>
  verifyAbsence(proof, NEVER, keySet, { log: { vkey }, policy: parsePolicy(policy), now, maxAgeMs: HOUR });
const liveCheckpoint = () => readFile(join(p.recordsDir, CURRENT_LINK, BUILD_CHECKPOINT_FILE), 'utf8');

describe('absence proofs after the checkpoint is cosigned again', () => {
  it('carry the new cosignatures at once, as record proofs do, and verify under a maximum age the old ones exceed', async () => {
    const before = await absence();
    expect(verdict(before, T0 + 10 * 60_000)).toMatchObject({ valid: true, witnessedAt: T0 });
    // A second answer from the same process, before the refresh: the same checkpoint.
    expect(parseTlogProof((await absence()).statement_proof).checkpoint).toBe(await liveCheckpoint());

    for (const w of witnesses) w.now.ms = T0 + DAY;
    const refreshed = await cosignBuild(p, policy);
    expect(refreshed).not.toBe(parseTlogProof(before.statement_proof).checkpoint);

    const after = await absence();
    const checkpoint = parseTlogProof(after.statement_proof).checkpoint;
    expect(checkpoint).toBe(refreshed);
    // The record proofs carry the very same checkpoint.
    expect(parseTlogProof((await g.request(`/v1/proof?domain=${GOLD}`)).text).checkpoint).toBe(checkpoint);
    // The path into the tree is the one it was: only the cosignatures moved.
    const [old, fresh] = [parseTlogProof(before.statement_proof), parseTlogProof(after.statement_proof)];
    expect({ index: fresh.index, proof: fresh.proof }).toEqual({ index: old.index, proof: old.proof });

    const now = T0 + DAY + 10 * 60_000;
    expect(verdict(before, now)).toMatchObject({ valid: false, code: 'NOT_WITNESSED' });
    expect(verdict(after, now)).toMatchObject({ valid: true, witnessedAt: T0 + DAY });
  });
});
