/**
 * A checkpoint sent to a witness is never rolled back, with the records in a bucket (the CI flow:
 * the build runs without the policy, `mvr publish --witness-policy` asks the witnesses). A publish
 * short of its quorum uploads no live build but leaves the sent checkpoint as the bucket's log
 * head, which the gateway serves at `/log/checkpoint`; `mvr log pull` on a fresh machine carries
 * it, so the next build extends what the witnesses saw and every one of them cosigns it.
 */
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTlogProof } from '#shared';
import { buildArgs, runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { GOLD, makeProject, type Project, removeTempDirs } from '../support/project.ts';
import { bucketAt, gatewayOnBucket } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { waitFor } from '../support/wait.ts';
import { checkpointSize, type WitnessedProject, witnessedProject } from '../support/witnessed-project.ts';

const BUCKET = 'mvr-sent';
const to = `s3://${BUCKET}/prod`;
let s3: TestS3;
let w: WitnessedProject;
let g: TestGateway;
beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  w = await witnessedProject();
}, 120_000);
afterAll(async () => {
  await cleanup();
  await w.close();
  await s3.close();
  await removeTempDirs();
});

/** `mvr build` without the policy, as the CI build job runs it. */
const buildOf = async (p: Project, now: string) => {
  const run = await runCli(buildArgs(p, ['--json'], now));
  if (run.code !== 0) throw new Error(run.stdout + run.stderr);
};
/** `mvr publish --witness-policy` of `p`'s live build, as the CI publish job runs it. */
const publish = (p: Project) =>
  runCli(['publish', '--to', to, '--records', p.recordsDir, '--public', p.publicDir, '--witness-policy', w.policyFile, '--json'], s3.env);
const oks = (stdout: string) => JSON.parse(stdout).witnesses.map((r: { ok: boolean }) => r.ok);

describe.sequential('a checkpoint sent from mvr publish is never rolled back', () => {
  it('a publish short of the quorum leaves no live build, but the sent checkpoint is the log head the gateway serves', async () => {
    await buildOf(w.p, '2026-11-01T00:00:00Z');
    const first = await publish(w.p);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const live = JSON.parse(first.stdout).build;
    g = await gatewayOnBucket(s3, BUCKET, 'prod', w.p);
    const firstSize = checkpointSize((await g.request('/log/checkpoint')).text);

    // A second build: witness a is sent the new checkpoint and cosigns it; b and c are down.
    await buildOf(w.p, '2026-11-10T00:00:00Z');
    await w.policyWith(['b', 'c']);
    const short = await publish(w.p);
    expect(short.code, short.stdout).toBe(19);
    expect(JSON.parse(short.stdout)).toMatchObject({ code: 'WITNESS_QUORUM_NOT_MET' });
    const sent = await readFile(join(w.p.publicDir, 'log/checkpoint'), 'utf8');
    expect(checkpointSize(sent)).toBeGreaterThan(firstSize);

    const bucket = bucketAt(s3, BUCKET, 'prod');
    try {
      expect(JSON.parse((await bucket.get('live.json')).body.toString('utf8')).build).toBe(live);
      expect(checkpointSize((await bucket.get('log/checkpoint')).body.toString('utf8'))).toBe(checkpointSize(sent));
    } finally {
      await bucket.close();
    }
    // The gateway serves the log as the witnesses saw it; record proofs stay against the live build's checkpoint.
    await waitFor(
      async () => checkpointSize((await g.request('/log/checkpoint')).text) === checkpointSize(sent),
      'the gateway serving the sent checkpoint',
    );
    const proof = parseTlogProof((await g.request(`/v1/proof?domain=${GOLD}`)).text);
    expect(checkpointSize(proof.checkpoint)).toBe(firstSize);
  });

  it('mvr log pull on a fresh machine carries the sent checkpoint, and the next build is cosigned by every witness', async () => {
    const fresh = await makeProject({ build: false });
    await cp(w.p.keysDir, fresh.keysDir, { recursive: true });
    const pulled = await runCli(['log', 'pull', '--from', `${g.url}/log`, '--public', fresh.publicDir, '--json']);
    expect(pulled.code, pulled.stdout + pulled.stderr).toBe(0);
    const sent = await readFile(join(w.p.publicDir, 'log/checkpoint'), 'utf8');
    expect(JSON.parse(pulled.stdout).size).toBe(checkpointSize(sent));

    await buildOf(fresh, '2026-11-20T00:00:00Z');
    await w.policyWith();
    const run = await publish(fresh);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    // Witness a, which cosigned the second checkpoint, accepts the third: it extends it.
    expect(oks(run.stdout)).toEqual([true, true, true]);
  });
});
