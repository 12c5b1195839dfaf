/**
 * Newest means last in a bucket (decision 0094), against the S3 test server and three real
 * witnesses: a publish short of its quorum leaves the bucket's log ending with its live build's
 * statement again (signed ahead by the build, since a publish holds no log key), so the refresh
 * that then reaches the quorum serves a head under which the live build's answers stay current.
 * The same build published again is refused (its checkpoint no longer extends the bucket's log);
 * the next build, made on that log, publishes and goes live. A head that does not end with the
 * live build's statement (the step could not be done) is never served by the refresh.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gatewaySource, parsePolicy, verifyOnline } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../core/errors/registry.ts';
import { audit, jsonl } from '../support/audits.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { cleanup } from '../support/gateway.ts';
import { vkeyFile } from '../support/logged-project.ts';
import { GOLD, removeTempDirs, UNAUDITED } from '../support/project.ts';
import { bucketAt, gatewayOnBucket } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { checkpointSize, type WitnessedProject, witnessedProject } from '../support/witnessed-project.ts';

const BUCKET = 'mvr-short-publish';
const to = `s3://${BUCKET}/prod`;
let s3: TestS3;
let w: WitnessedProject;
let vkey: string;

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

const cli = (args: string[]) => runCli([...args, '--to', to, '--records', w.p.recordsDir, '--public', w.p.publicDir, '--json'], s3.env);
const publish = () => cli(['publish', '--witness-policy', w.policyFile]);
const build = async (now: string) => {
  const run = await runCli(buildArgs(w.p, ['--json'], now));
  expect(run.code, run.stdout + run.stderr).toBe(0);
  return JSON.parse(run.stdout).build_id as string;
};
const bucketFile = async (key: string) => {
  const bucket = bucketAt(s3, BUCKET, 'prod');
  try {
    return (await bucket.get(key)).body.toString('utf8');
  } finally {
    await bucket.close();
  }
};
const liveInBucket = async () => JSON.parse(await bucketFile('live.json')).build as string;

/** The package's online verification through a gateway on the bucket, with the log key and the witnesses' policy. */
async function answers(domains: string[]): Promise<(string | null)[]> {
  const g = await gatewayOnBucket(s3, BUCKET, 'prod', w.p);
  try {
    const policy = parsePolicy(await readFile(w.policyFile, 'utf8'));
    const source = gatewaySource({ baseUrl: g.url, apiKey: g.key });
    const now = w.witnesses[0]!.now.ms;
    return await Promise.all(domains.map(async (domain) => (await verifyOnline({ domain, source, vkey, log: true, policy, now })).code));
  } finally {
    await g.close();
  }
}

describe.sequential('a publish short of its witness quorum', () => {
  it('leaves the bucket live build current after the refresh reaches the quorum', async () => {
    const nov = await build('2026-11-01T00:00:00Z');
    vkey = (await readFile(vkeyFile(w.p), 'utf8')).trim();
    const first = await publish();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(await liveInBucket()).toBe(nov);

    await writeFile(join(w.p.auditsDir, 'more.jsonl'), jsonl(audit('one-more-shop.example')));
    const dec = await build('2026-12-01T00:00:00Z');
    const decSize = checkpointSize(await readFile(join(w.p.recordsDir, 'builds', dec, 'log-checkpoint'), 'utf8'));
    await w.policyWith(['b', 'c']);
    const short = await publish();
    expect(short.code, short.stdout + short.stderr).toBe(exitCodeOf('WITNESS_QUORUM_NOT_MET'));
    expect(await liveInBucket()).toBe(nov);
    // The head: December's entries, then November's statement once more; the public folder's log the same.
    const head = await bucketFile('log/checkpoint');
    expect(checkpointSize(head)).toBe(decSize + 1);
    expect(await readFile(join(w.p.publicDir, 'log', 'checkpoint'), 'utf8')).toBe(head);
    expect(await answers([GOLD, UNAUDITED])).toEqual([null, 'NEVER_AUDITED']);

    await w.policyWith();
    const refresh = await cli(['log', 'witness', '--policy', w.policyFile]);
    expect(refresh.code, refresh.stdout + refresh.stderr).toBe(0);
    expect(JSON.parse(refresh.stdout).written).toEqual([`${to}/log/checkpoint`, `${to}/builds/${nov}/served-checkpoint`]);
    expect(checkpointSize(await bucketFile(`builds/${nov}/served-checkpoint`))).toBe(decSize + 1);
    // Answers from November's build, proven against the cosigned head: current, not BUILD_SUPERSEDED.
    expect(await answers([GOLD, UNAUDITED])).toEqual([null, 'NEVER_AUDITED']);
  });

  it('the same build published again is refused; the next build goes live and its answers are current', async () => {
    const nov = await liveInBucket();
    const again = await publish();
    expect(again.code, again.stdout + again.stderr).toBe(exitCodeOf('LOG_INCONSISTENT'));
    expect(await liveInBucket()).toBe(nov);

    const next5 = await build('2026-12-05T00:00:00Z');
    const next = await publish();
    expect(next.code, next.stdout + next.stderr).toBe(0);
    expect(await liveInBucket()).toBe(next5);
    expect(await answers([GOLD, UNAUDITED])).toEqual([null, 'NEVER_AUDITED']);
  });

  it('one that could not append the live statement again says so, and the refresh does not serve its head', async () => {
    const live = await liveInBucket();
    await writeFile(join(w.p.auditsDir, 'more.jsonl'), jsonl(audit('one-more-shop.example'), audit('another-shop.example')));
    const lacking = await build('2026-12-06T00:00:00Z');
    await rm(join(w.p.recordsDir, 'builds', lacking, 'log-if-not-live'), { recursive: true });
    await w.policyWith(['b', 'c']);
    const short = await publish();
    expect(short.code, short.stdout + short.stderr).toBe(exitCodeOf('BUILD_FAILED'));
    expect(JSON.parse(short.stdout).message).toMatch(/short of the quorum.*could not be ended with its live build's statement again/);
    expect(await liveInBucket()).toBe(live);

    // Witness a saw the head and refuses the live build's smaller checkpoint; b and c make the quorum for it.
    await w.policyWith();
    const refresh = await cli(['log', 'witness', '--policy', w.policyFile]);
    expect(refresh.code, refresh.stdout + refresh.stderr).toBe(0);
    expect(JSON.parse(refresh.stdout).written).toEqual([`${to}/builds/${live}/log-checkpoint`]);
    expect(await answers([GOLD, UNAUDITED])).toEqual([null, 'NEVER_AUDITED']);
  });
});
