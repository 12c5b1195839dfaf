/**
 * The monthly rebuild's build job, its shell steps run here in order against a temp copy of the
 * project (test/support/workflow-job.ts): it signs, checks, scans and packages, and fails where it
 * must (missing secrets, an unreachable key set or log, a private member in the output, too few
 * records).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3 } from '../support/s3-server.ts';
import { ROOT } from '../support/workflow.ts';
import { type JobInput, type JobRun, removeJobTemps, runBuildJob } from '../support/workflow-job.ts';
import { expectInNoFile, keySetOf, makeJobFixtures } from '../support/workflow-job-fixtures.ts';

const run = promisify(execFile);

// One test at a time (runs are mostly CPU; on 2 cores more only starve); a test's own runs side by side.
describe('monthly-rebuild.yml build job, run here', () => {
  const ISSUER = 'verify.example.com';
  const DEFAULT_ISSUER = 'merchant-verify.example'; // the CLI's, for dry runs without vars.MVR_ISSUER
  const AUDITS_URL = 'https://audits.example.net/2026-11.tar.gz?token=s3cr3t-audits-token';
  const KEY_SET_URL = `https://${ISSUER}/.well-known/merchant-verify-keys.json`;
  let fixtures: string;
  let oldKid: string;
  let oldPublicSet: string; // a key set file listing the old key
  let newKid: string;
  let newPrivateJwk: string; // the secret
  let newD: string;
  let auditsTarball: string;
  let logKey: string; // the log key secret, for the issuer
  let defaultIssuerLogKey: string; // one for the default issuer (dry runs without MVR_ISSUER)
  let publishedLog: string; // a log published last month (a folder standing for https://<issuer>/log)

  // The fixtures are made in-process (what they are is not under test here; the job's own `mvr` runs are).
  beforeAll(async () => {
    ({ fixtures, oldKid, oldPublicSet, newKid, newPrivateJwk, newD, auditsTarball, logKey, defaultIssuerLogKey, publishedLog } =
      await makeJobFixtures(ISSUER, DEFAULT_ISSUER));
  }, 60_000);

  afterAll(removeJobTemps);

  const routes = () => ({ [AUDITS_URL]: { status: 200, file: auditsTarball }, [KEY_SET_URL]: { status: 200, file: oldPublicSet } });
  const baseInput = (): JobInput => ({
    secrets: { MVR_SIGNING_KEY: newPrivateJwk, MVR_LOG_KEY: logKey, AUDITS_URL },
    vars: { MVR_ISSUER: ISSUER, MVR_MIN_RECORDS: '10', MVR_LOG_URL: publishedLog },
    routes: routes(),
  });

  // The whole job with the base input, run once for the file: the tests that check it read it, and
  // the runs that fail at the build or after it resume from its state before that step (the steps
  // before are the same for them: runBuildJob checks it), instead of redoing the build to get there.
  let base: Promise<JobRun> | undefined;
  const baseRun = () => (base ??= runBuildJob({ ...baseInput(), snapshotBefore: ['Build and sign', 'Check the build summary'] }));
  const resumeAt = async (step: string) => Object.entries((await baseRun()).snapshots).find(([name]) => name.startsWith(step))![1];

  it('signs the audits, keeps the published keys listed, checks, scans and packages; the key never lands on disk or in the log', async () => {
    const r = await baseRun();
    expect(r.log).not.toContain('::error::');
    expect(r.ok, r.log).toBe(true);
    expect(keySetOf(r).sort()).toEqual([newKid, oldKid].sort());

    const summary = JSON.parse(readFileSync(r.outputs.build!.summary!, 'utf8')) as { signed: boolean; key_id: string; records: number };
    expect(summary).toMatchObject({ signed: true, key_id: newKid });
    expect(summary.records).toBeGreaterThanOrEqual(10);
    // The log was carried from last month's and extended: 34 entries then (33 records and the statement), 68 now.
    expect((summary as unknown as { log: unknown }).log).toMatchObject({ origin: `${ISSUER}/log`, from: 34, to: 68 });
    expect(r.stepSummary).toContain(`log: ${ISSUER}/log, entries 34 to 68`);
    expect(r.stepSummary).toContain('checks passed');
    expect(r.stepSummary).toContain(newKid);

    // The package holds records/ (the live build, with its manifest) and public/ (the key set).
    const pkg = r.outputs.package!;
    expect(pkg.name).toMatch(/^merchant-verify-/);
    const listing = (await run('tar', ['-tzf', pkg.file!])).stdout.split('\n');
    expect(listing).toContain('records/manifest.json');
    expect(listing).toContain('public/.well-known/merchant-verify-keys.json');
    expect(listing).toContain('public/log/checkpoint');
    expect(listing).toContain('public/.well-known/merchant-verify-log.vkey');
    expect(listing).toContain('records/domain-map');
    // The records ride in their packs (one file a record only with `mvr build --tree`): the JSON files are the manifest and the statement.
    expect(listing.filter((l) => l.startsWith('records/') && l.endsWith('.json')).length).toBe(2);
    expect(listing.filter((l) => /^records\/packs\/[0-9a-f]{64}\.jsonl$/.test(l)).length).toBeGreaterThan(0);
    expect(listing).toContain('records/lookup-answers');
    const sha = (await run('sha256sum', [pkg.file!])).stdout.split(' ')[0];
    expect(pkg.sha256).toBe(sha);
    const manifest = JSON.parse((await run('tar', ['-xzOf', pkg.file!, 'records/manifest.json'])).stdout) as { issuer: string };
    expect(manifest.issuer).toBe(ISSUER);

    // The private scalar appears in no file the job wrote and in no line it printed.
    expect(r.log).not.toContain(newD);
    expectInNoFile(r, newD);
    // The audits URL (it may carry a token) went to curl on stdin, not on its command line.
    expect(r.curlCalls.flat().join(' ')).not.toContain('s3cr3t-audits-token');
    expect(r.curlCalls.flat()).toContain(KEY_SET_URL);
  });

  it('fails when the published log cannot be carried over, unless first_log; and without the log key secret', async () => {
    const missing = { ...baseInput(), vars: { ...baseInput().vars, MVR_LOG_URL: join(publishedLog, 'nowhere') } };
    const [r, first, noKey] = await Promise.all([
      runBuildJob(missing),
      runBuildJob({ ...missing, inputs: { first_log: true } }),
      runBuildJob({ ...baseInput(), secrets: { MVR_SIGNING_KEY: newPrivateJwk, AUDITS_URL }, resume: await resumeAt('Build and sign') }),
    ]);
    expect(r.ok).toBe(false);
    expect(r.failedStep).toMatch(/^Carry the published log/);
    expect(r.log).toContain('first_log');
    expect(first.ok, first.log).toBe(true);
    expect((JSON.parse(readFileSync(first.outputs.build!.summary!, 'utf8')) as { log: unknown }).log).toMatchObject({ from: 0, to: 34 });
    expect(noKey.failedStep).toMatch(/^Build and sign/);
    expect(noKey.log).toContain('MVR_LOG_KEY is not set');
    // The log key's text never reaches a file the job wrote or a line it printed.
    expect(first.log).not.toContain(logKey.trim());
    expectInNoFile(first, logKey.trim());
  });

  it("carries the kept builds from vars.MVR_RECORDS_URL (mvr pull): the build keeps last month's, and the package holds the kept list", async () => {
    const s3 = await startS3(['mvr-ci']);
    try {
      const last = join(fixtures, 'last-month');
      const published = await run(
        process.execPath,
        [
          join(ROOT, 'bin', 'mvr.js'),
          'publish',
          '--to',
          's3://mvr-ci/prod',
          '--records',
          join(last, 'records'),
          '--public',
          join(last, 'public'),
          '--json',
        ],
        { env: { PATH: process.env.PATH ?? '', ...s3.env } },
      );
      const lastId = (JSON.parse(published.stdout) as { build: string }).build;
      const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL_S3 } = s3.env;
      const input = baseInput();
      const r = await runBuildJob({
        ...input,
        vars: { ...input.vars, MVR_RECORDS_URL: 's3://mvr-ci/prod', AWS_REGION: AWS_REGION!, AWS_ENDPOINT_URL_S3: AWS_ENDPOINT_URL_S3! },
        secrets: { ...input.secrets, AWS_ACCESS_KEY_ID: AWS_ACCESS_KEY_ID!, AWS_SECRET_ACCESS_KEY: AWS_SECRET_ACCESS_KEY! },
      });
      expect(r.ok, r.log).toBe(true);
      expect(r.log).toMatch(/pulled 1 kept build /);
      const summary = JSON.parse(readFileSync(r.outputs.build!.summary!, 'utf8')) as { kept_builds: number; build_id: string };
      expect(summary.kept_builds).toBe(2);
      const listing = (await run('tar', ['-tzf', r.outputs.package!.file!])).stdout.split('\n');
      expect(listing).toEqual(
        expect.arrayContaining(['kept/kept.json', `kept/${lastId}/manifest.json`, `kept/${summary.build_id}/manifest.json`]),
      );
      const kept = JSON.parse((await run('tar', ['-xzOf', r.outputs.package!.file!, 'kept/kept.json'])).stdout) as {
        builds: { id: string }[];
      };
      expect(kept.builds.map((b) => b.id)).toEqual([summary.build_id, lastId]);
      // Without the variable the build says it keeps no history.
      expect((await baseRun()).log).toContain('vars.MVR_RECORDS_URL is not set');
    } finally {
      await s3.close();
    }
  });

  it('(the harness) refuses to resume past a step that this input would run differently', async () => {
    const moved = { ...baseInput(), vars: { ...baseInput().vars, MVR_LOG_URL: join(publishedLog, 'elsewhere') } };
    await expect(runBuildJob({ ...moved, resume: await resumeAt('Build and sign') })).rejects.toThrow(
      /resumed past "Carry the published log/,
    );
  });

  it('retire_key_ids drops a key from the key set', async () => {
    const r = await runBuildJob({ ...baseInput(), inputs: { retire_key_ids: oldKid } });
    expect(r.ok, r.log).toBe(true);
    expect(keySetOf(r)).toEqual([newKid]);
  });

  it('fails before building when the signing key secret is missing', async () => {
    const input = baseInput();
    input.secrets = { AUDITS_URL };
    const r = await runBuildJob({ ...input, resume: await resumeAt('Build and sign') });
    expect(r.ok).toBe(false);
    expect(r.failedStep).toMatch(/^Build and sign/);
    expect(r.log).toContain('MVR_SIGNING_KEY is not set');
    expect(existsSync(join(r.workspace, 'records'))).toBe(false);
  });

  it('fails when the published key set cannot be downloaded, unless first_build', async () => {
    const missing = { ...baseInput(), routes: { ...routes(), [KEY_SET_URL]: { status: 404 } } };
    const [r, first] = await Promise.all([runBuildJob(missing), runBuildJob({ ...missing, inputs: { first_build: true } })]);
    expect(r.ok).toBe(false);
    expect(r.failedStep).toMatch(/published key set/);
    expect(r.log).toContain('HTTP 404');

    expect(first.ok, first.log).toBe(true);
    expect(keySetOf(first)).toEqual([newKid]);
  });

  it('refuses to publish when a private JWK member "d" shows up in public/ or records/', async () => {
    const r = await runBuildJob({
      ...baseInput(),
      resume: await resumeAt('Check the build summary'),
      before: (step, ws) => {
        if (step.startsWith('Stage the output'))
          writeFileSync(join(ws, 'public', 'leak.json'), JSON.stringify({ keys: [{ kty: 'OKP', d: 'x' }] }));
      },
    });
    expect(r.ok).toBe(false);
    expect(r.failedStep).toMatch(/^Stage the output/);
    expect(r.log).toContain('leak.json');
    expect(r.outputs.package).toBeUndefined();
  });

  it('refuses a build smaller than vars.MVR_MIN_RECORDS, and a non-dry run without AUDITS_URL or MVR_ISSUER', async () => {
    const [small, noAudits, noIssuer] = await Promise.all([
      runBuildJob({
        ...baseInput(),
        vars: { ...baseInput().vars, MVR_MIN_RECORDS: '1000000' },
        resume: await resumeAt('Check the build summary'),
      }),
      runBuildJob({ ...baseInput(), secrets: { MVR_SIGNING_KEY: newPrivateJwk } }),
      runBuildJob({ ...baseInput(), vars: {} }),
    ]);
    expect(small.ok).toBe(false);
    expect(small.failedStep).toBe('Check the build summary');
    expect(small.stepSummary).toContain('FAILED');
    expect(small.log).toContain('fewer than the minimum 1000000');
    expect(noAudits.failedStep).toMatch(/^Fetch the audits/);
    expect(noIssuer.failedStep).toBe('Check the configuration');
  });

  it('a dry run without AUDITS_URL or MVR_ISSUER builds the sample audits', async () => {
    const r = await runBuildJob({
      secrets: { MVR_SIGNING_KEY: newPrivateJwk, MVR_LOG_KEY: defaultIssuerLogKey },
      inputs: { dry_run: true, first_build: true },
    });
    expect(r.ok, r.log).toBe(true);
    expect(r.log).toContain('builds the sample audits');
    expect(keySetOf(r)).toEqual([newKid]);
  });
});
