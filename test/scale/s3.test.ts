/**
 * Records in private S3-compatible storage: `mvr publish --to s3://` and the gateway reading
 * `--records s3://` (the live build, and the kept builds' history and change feed), against a
 * local server that checks every request's Signature V4.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadBuild } from '../../builder/publish.ts';
import { verifyRecordNode } from '../../core/crypto/signing.ts';
import { recordPath } from '../../core/layout.ts';
import { openStore } from '../../storage/open.ts';
import { parseS3Url, s3ConfigFromEnv } from '../../storage/s3/bucket.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { publishedKeySet } from '../support/outputs.ts';
import { livePlace, liveRecordBytes } from '../support/packs.ts';
import { build, makeProject, type Project } from '../support/project.ts';
import { bucketAt as bucketOn, gatewayOnBucket, publishTo } from '../support/s3-records.ts';
import { S3_SECRET_KEY, startS3, type TestS3 } from '../support/s3-server.ts';
import { poll } from '../support/wait.ts';

const BUCKET = 'mvr-records';
const GOLD = 'acme-outdoor.example';

let s3: TestS3;
let project: Project;
const bucketAt = (prefix: string, env: Record<string, string> = s3.env) => bucketOn(s3, BUCKET, prefix, env);
const publish = (prefix: string, p: Project = project) => publishTo(s3, BUCKET, prefix, p);
const gatewayOn = (prefix: string, p: Project = project) => gatewayOnBucket(s3, BUCKET, prefix, p);

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  project = await makeProject();
});
afterAll(async () => {
  await cleanup();
  await s3.close();
});
describe('the test server checks Signature V4', () => {
  it('refuses unsigned requests and requests signed with another secret, and accepts correctly signed ones', async () => {
    const bucket = bucketAt('check');
    await bucket.put('a.json', Buffer.from('{}'), 'application/json');
    expect((await bucket.get('a.json')).statusCode).toBe(200);
    expect((await fetch(`${s3.endpoint}/${BUCKET}/check/a.json`)).status).toBe(403);
    const wrong = bucketAt('check', { ...s3.env, AWS_SECRET_ACCESS_KEY: `${S3_SECRET_KEY}x` });
    expect((await wrong.get('a.json')).statusCode).toBe(403);
    await Promise.all([bucket.close(), wrong.close()]);
  });
});

describe('mvr publish --to s3:// and the gateway on --records s3://', () => {
  let g: TestGateway;

  it('`mvr publish` uploads the live build, then live.json; the bucket stays private', async () => {
    const published = await runCli(
      ['publish', '--to', `s3://${BUCKET}/prod`, '--records', project.recordsDir, '--public', project.publicDir, '--json'],
      s3.env,
    );
    expect(published.code, published.stderr).toBe(0);
    const summary = JSON.parse(published.stdout) as { ok: boolean; records: number; objects: number; build: string };
    // The 33 records in one pack, its index, the index, the domain map, the statement, the compact answers, the kept list, the key set, the manifest, live.json.
    expect(summary).toMatchObject({ ok: true, records: 33, earlier_builds: 0, objects: 10, uploaded: 10, skipped: 0 });
    const bucket = bucketAt('prod');
    const live = await bucket.get('live.json');
    expect(JSON.parse(live.body.toString('utf8'))).toMatchObject({ build: summary.build, records: 33 });
    // The records go up in their pack (the record one range of it); the per-record files stay in the records folder.
    const { path, start, length } = await livePlace(project, GOLD);
    const key = `builds/${summary.build}/${path}`;
    expect((await bucket.get(key)).body.subarray(start, start + length)).toEqual(await liveRecordBytes(project, GOLD));
    expect(await bucket.head(`builds/${summary.build}/${recordPath(GOLD)}`)).toBeNull();
    expect((await fetch(`${s3.endpoint}/${BUCKET}/prod/${key}`)).status).toBe(403);
    await bucket.close();
  });

  it('serves the stored bytes, verified against the key set published with the build; never-audited domains as usual', async () => {
    g = await gatewayOn('prod');
    const r = await g.verify(GOLD);
    expect(r.status).toBe(200);
    expect(r.bytes).toEqual(await liveRecordBytes(project, GOLD));
    const keySet = await g.request('/.well-known/merchant-verify-keys.json');
    expect(keySet.bytes).toEqual((await publishedKeySet(project)).bytes);
    expect((await g.verify('never-audited.example')).json).toMatchObject({ status: 'unverified' });
    expect((await g.request('/healthz')).json).toMatchObject({ status: 'ok', records: { ok: true } });
  });

  it('a new publish goes live within a second, with its own key set; every answer verifies', async () => {
    const before = (await g.verify(GOLD)).json as { issued_at: string };
    await build(project, { now: Date.parse('2026-12-01T00:00:00Z') });
    await publish('prod');
    const { value: after } = await poll(
      async () => (await g.verify(GOLD)).json as { issued_at: string },
      (r) => r.issued_at !== before.issued_at,
      { timeoutMs: 1000 },
    );
    expect(after.issued_at).toBe('2026-12-01T00:00:00.000Z');
    const { keySet } = await publishedKeySet(project);
    expect(verifyRecordNode(after, keySet).valid).toBe(true);
  });

  it('an interrupted publish leaves the old build live', async () => {
    const live = (await g.verify(GOLD)).bytes;
    await build(project, { now: Date.parse('2027-01-01T00:00:00Z') });
    const store = openStore({ url: `s3://${BUCKET}/prod`, s3: s3ConfigFromEnv(s3.env) });
    const publishing = uploadBuild({
      recordsDir: project.recordsDir,
      publicDir: project.publicDir,
      to: store,
      concurrency: 1,
      onProgress: (p) => void (p.uploaded === 5 && s3.stop()),
    });
    await expect(publishing).rejects.toMatchObject({
      code: 'BUILD_FAILED',
      message: expect.stringMatching(/live build there is unchanged/),
    });
    await store.close();
    await s3.start();
    // The gateway may answer 503 until it has read the store again; then it serves the old build.
    const { value: after } = await poll(
      () => g.verify(GOLD),
      (r) => r.status !== 503,
      { timeoutMs: 5000 },
    );
    expect(after.bytes).toEqual(live);
  });

  it('a store that goes away is STORE_UNAVAILABLE (never "never audited"), and the gateway recovers by itself', async () => {
    await s3.stop();
    const { value: down } = await poll(
      () => g.verify('not-cached.example'),
      (r) => r.status === 503,
      { timeoutMs: 3000 },
    );
    expect(down.json).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await s3.start();
    const { value: back } = await poll(
      () => g.verify(GOLD),
      (r) => r.status === 200,
      { timeoutMs: 5000 },
    );
    expect(back.status).toBe(200);
    await g.close();
  });

  it('bad settings are clear errors: a bucket URL, missing credentials', async () => {
    expect(() => parseS3Url('s3://')).toThrow(/s3:\/\/BUCKET\/PREFIX/);
    expect(() => s3ConfigFromEnv({ AWS_ACCESS_KEY_ID: 'AKIAONLYTHEID' })).toThrow(
      /AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not/,
    );
    const r = await runCli(['publish', '--to', 'https://x/y', '--records', project.recordsDir]);
    expect(r).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--to \/ MVR_PUBLISH_TO "https:\/\/x\/y": must be s3:\/\/BUCKET\/PREFIX/),
    });
  });
});
