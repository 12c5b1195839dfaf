/**
 * Witnessing with the records in a bucket: `mvr publish --witness-policy` cosigns the live
 * checkpoint afresh before it uploads the build (short of the quorum only the log's tiles and head
 * go up: the checkpoint sent is never rolled back), and `mvr log witness --to s3://` rewrites the
 * bucket's live checkpoint and head, which a running gateway on the bucket serves at its next
 * refresh, at `/log/checkpoint` and inside record proofs. After a publish short of its quorum the
 * refresh has the bucket's newer head cosigned (the witness that saw it refuses the live build's own
 * checkpoint) and writes it as the live build's served checkpoint, which proofs are then against.
 */
import { readFile, readlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTlogProof } from '#shared';
import { buildArgs, runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { GOLD, removeTempDirs } from '../support/project.ts';
import { bucketAt, gatewayOnBucket } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { waitFor } from '../support/wait.ts';
import { checkpointSize, cosignatureTimes, type WitnessedProject, witnessedProject } from '../support/witnessed-project.ts';

const BUCKET = 'mvr-witnessed';
const DAY = 86_400_000;
let s3: TestS3;
let w: WitnessedProject;
let policy: string;
beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  w = await witnessedProject();
  policy = await w.policyWith();
  // Built without the policy: the checkpoint is signed by the log alone until mvr publish has it cosigned.
  const run = await runCli(buildArgs(w.p, ['--json'], '2026-11-01T00:00:00Z'));
  if (run.code !== 0) throw new Error(run.stdout + run.stderr);
}, 120_000);
afterAll(async () => {
  await cleanup();
  await w.close();
  await s3.close();
  await removeTempDirs();
});

const to = `s3://${BUCKET}/prod`;
const cli = (args: string[]) => runCli([...args, '--to', to, '--records', w.p.recordsDir, '--public', w.p.publicDir, '--json'], s3.env);
const publish = () => cli(['publish', '--witness-policy', w.policyFile]);

describe.sequential('witnessing with the records in a bucket', () => {
  it('mvr publish uploads no build when the checkpoint is short of the quorum, only the log it sent', async () => {
    await w.policyWith(['b', 'c']);
    const run = await publish();
    expect(run.code, run.stdout).toBe(19);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, code: 'WITNESS_QUORUM_NOT_MET' });
    // No live build; only the log went up first (its tiles, then its head: the checkpoint sent).
    const bucket = bucketAt(s3, BUCKET, 'prod');
    expect((await bucket.get('live.json')).statusCode).toBe(404);
    const id = basename(await readlink(join(w.p.recordsDir, 'current')));
    expect((await bucket.get(`builds/${id}/manifest.json`)).statusCode).toBe(404);
    expect((await bucket.get('log/checkpoint')).body.toString('utf8')).toBe(await readFile(join(w.p.publicDir, 'log/checkpoint'), 'utf8'));
    await bucket.close();
  });

  it('mvr publish uploads the checkpoint with fresh cosignatures, and mvr log witness --to moves them on a running gateway', async () => {
    const t0 = w.witnesses[0]!.now.ms;
    w.setClock(t0 + DAY);
    await w.policyWith();
    const run = await publish();
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).witnesses.map((r: { ok: boolean }) => r.ok)).toEqual([true, true, true]);
    const g: TestGateway = await gatewayOnBucket(s3, BUCKET, 'prod', w.p);
    const served = async () => (await g.request('/log/checkpoint')).text;
    const inProof = async () => parseTlogProof((await g.request(`/v1/proof?domain=${GOLD}`)).text).checkpoint;
    const at = (ms: number) => ({ a: ms, b: ms, c: ms });
    expect(cosignatureTimes(await served(), policy, t0 + DAY)).toEqual(at(t0 + DAY));

    w.setClock(t0 + 2 * DAY);
    const refreshed = await cli(['log', 'witness', '--policy', w.policyFile]);
    expect(refreshed.code, refreshed.stdout + refreshed.stderr).toBe(0);
    expect(JSON.parse(refreshed.stdout).written).toEqual([
      `${to}/builds/${JSON.parse(run.stdout).build}/log-checkpoint`,
      `${to}/log/checkpoint`,
    ]);
    // The gateway reads the live checkpoint again at its next refresh (every 100 ms in tests).
    await waitFor(
      async () => cosignatureTimes(await served(), policy, t0 + 2 * DAY).a === t0 + 2 * DAY,
      'the gateway serving the refreshed cosignatures',
    );
    expect(cosignatureTimes(await served(), policy, t0 + 2 * DAY)).toEqual(at(t0 + 2 * DAY));
    expect(cosignatureTimes(await inProof(), policy, t0 + 2 * DAY)).toEqual(at(t0 + 2 * DAY));
  });

  it('after a publish short of its quorum, the refresh has the newer head cosigned by all three, and proofs are against it', async () => {
    const bucket = bucketAt(s3, BUCKET, 'prod');
    const live = JSON.parse((await bucket.get('live.json')).body.toString('utf8')).build as string;
    const t0 = w.witnesses[0]!.now.ms;
    const next = await runCli(buildArgs(w.p, ['--json'], '2026-11-05T00:00:00Z'));
    expect(next.code, next.stdout + next.stderr).toBe(0);
    await w.policyWith(['b', 'c']);
    expect((await publish()).code).toBe(19);
    // Witness a saw the newer checkpoint: it refuses the live build's own, smaller one from now on.
    const head = (await bucket.get('log/checkpoint')).body.toString('utf8');
    expect(checkpointSize(head)).toBeGreaterThan(checkpointSize((await bucket.get(`builds/${live}/log-checkpoint`)).body.toString('utf8')));

    w.setClock(t0 + DAY);
    await w.policyWith();
    const refreshed = await cli(['log', 'witness', '--policy', w.policyFile]);
    expect(refreshed.code, refreshed.stdout + refreshed.stderr).toBe(0);
    expect(JSON.parse(refreshed.stdout).written).toEqual([`${to}/log/checkpoint`, `${to}/builds/${live}/served-checkpoint`]);
    const g: TestGateway = await gatewayOnBucket(s3, BUCKET, 'prod', w.p);
    const proof = parseTlogProof((await g.request(`/v1/proof?domain=${GOLD}`)).text).checkpoint;
    expect(checkpointSize(proof)).toBe(checkpointSize(head));
    expect(cosignatureTimes(proof, policy, t0 + DAY)).toEqual({ a: t0 + DAY, b: t0 + DAY, c: t0 + DAY });
    expect(JSON.parse((await bucket.get('live.json')).body.toString('utf8')).build).toBe(live);
    await bucket.close();
  });
});
