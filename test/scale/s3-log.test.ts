/**
 * The transparency log from a bucket: `mvr publish` uploads the tiles a build added, its verifier
 * key and checkpoint, and a gateway on `--records s3://` (no public folder at all) serves the log
 * and every proof exactly as a gateway on the records folder does.
 */
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyLogProof } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { uploadBuild } from '../../builder/publish.ts';
import { createLogKey, logOrigin } from '../../keyring/log-key.ts';
import { openStore } from '../../storage/open.ts';
import { parseS3Url, S3Bucket, s3ConfigFromEnv } from '../../storage/s3/bucket.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, startTestGateway, type TestGateway, trustingProject } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { liveRecords } from '../support/outputs.ts';
import { build, ISSUER, makeProject, type Project, removeTempDirs, tempDir } from '../support/project.ts';
import { publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';

const BUCKET = 'mvr-log';
let s3: TestS3;
let project: Project;
let folder: TestGateway;
let bucketGateway: TestGateway;
let firstCheckpoint: string;

const publish = () => publishTo(s3, BUCKET, 'prod', project);

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  project = await makeProject({ build: false });
  await createLogKey(project.keysDir, logOrigin(ISSUER));
  await build(project, { now: Date.parse('2026-11-01T00:00:00Z') });
  firstCheckpoint = await readFile(join(project.publicDir, 'log/checkpoint'), 'utf8');
  await publish();
  await build(project, { now: Date.parse('2026-12-01T00:00:00Z') });
  await publish();
  folder = await startTestGateway(project);
  bucketGateway = await startTestGateway(project, {
    trust: await trustingProject(project),
    records: { url: `s3://${BUCKET}/prod`, s3: s3ConfigFromEnv(s3.env), publicDir: '/nonexistent' },
  });
}, 60_000);
afterAll(async () => {
  await cleanup();
  await s3.close();
  await removeTempDirs();
});

describe('the log from a bucket', () => {
  it('serves the checkpoint, every tile and the verifier key as the folder gateway does, without a public folder', async () => {
    const paths = [
      'checkpoint',
      ...(await readdir(join(project.publicDir, 'log'), { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile() && e.name !== 'checkpoint')
        .map((e) => join(e.parentPath, e.name).slice(join(project.publicDir, 'log').length + 1)),
    ];
    expect(paths.length).toBeGreaterThan(4);
    for (const path of paths) {
      const [a, b] = await Promise.all([
        folder.request(`/log/${path}`, { key: null }),
        bucketGateway.request(`/log/${path}`, { key: null }),
      ]);
      expect(b.status, path).toBe(200);
      expect(b.bytes, path).toEqual(a.bytes);
      expect(b.headers.get('cache-control')).toBe(a.headers.get('cache-control'));
    }
    const vkey = await bucketGateway.request('/.well-known/merchant-verify-log.vkey', { key: null });
    expect(vkey.text).toBe((await folder.request('/.well-known/merchant-verify-log.vkey', { key: null })).text);
  });

  it("gives every record's proof byte for byte as the folder gateway, and each verifies", async () => {
    const vkey = (await readFile(join(project.publicDir, '.well-known/merchant-verify-log.vkey'), 'utf8')).trim();
    const domains = [...(await liveRecords(project)).keys()];
    expect(domains).toHaveLength(33);
    for (const domain of domains) {
      const [a, b] = await Promise.all([folder.request(`/v1/proof?domain=${domain}`), bucketGateway.request(`/v1/proof?domain=${domain}`)]);
      expect(b.status, domain).toBe(200);
      expect(b.text).toBe(a.text);
      expect(verifyLogProof((await bucketGateway.verify(domain)).json, b.text, { vkey })).toMatchObject({
        valid: true,
        checkpoint: { size: 68 },
      });
    }
    expectProblem(await bucketGateway.request('/v1/proof?domain=never-audited.example'), 404, 'NOT_IN_LOG');
  });

  it("?build= proves a kept build's record from the bucket byte for byte as from the folder", async () => {
    const vkey = (await readFile(join(project.publicDir, '.well-known/merchant-verify-log.vkey'), 'utf8')).trim();
    const older = ((await bucketGateway.request('/v1/builds')).json.builds as { id: string }[])[1]!.id;
    const path = `/v1/proof?domain=acme-outdoor.example&build=${older}`;
    const [a, b] = await Promise.all([folder.request(path), bucketGateway.request(path)]);
    expect(b.status).toBe(200);
    expect(b.text).toBe(a.text);
    const record = (await bucketGateway.request(`/v1/verify?domain=acme-outdoor.example&build=${older}`)).json;
    expect(verifyLogProof(record, b.text, { vkey })).toMatchObject({ valid: true, checkpoint: { size: 34 } });
    expectProblem(await bucketGateway.request('/v1/proof?domain=acme-outdoor.example&build=1999-01-01T000000Z'), 404, 'BUILD_NOT_FOUND');
  });

  it('MCP include_proof, and mvr log check against the bucket gateway', async () => {
    const client = await connectHttpClient(bucketGateway.url, bucketGateway.key);
    const result = (await client.callTool({
      name: 'verify_merchant',
      arguments: { domain: 'acme-outdoor.example', include_proof: true },
    })) as unknown as { content: { text: string }[] };
    expect(result.content[1]!.text).toBe((await bucketGateway.request('/v1/proof?domain=acme-outdoor.example')).text);
    await client.close();
    const saved = join(await tempDir(), 'checkpoint');
    await writeFile(saved, firstCheckpoint);
    const r = await runCli(['log', 'check', '--checkpoint', saved, '--log', `${bucketGateway.url}/log`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/grew from 34 to 68 entries/);
  });

  it('a bucket that cannot be read is 503 STORE_UNAVAILABLE for proofs and the log', async () => {
    await s3.stop();
    try {
      // Until the gateway notices (it re-reads live.json every 100 ms here): polled, not slept on.
      await vi.waitFor(
        async () => {
          expectProblem(await bucketGateway.request('/v1/proof?domain=acme-outdoor.example'), 503, 'STORE_UNAVAILABLE');
          expectProblem(await bucketGateway.request('/log/checkpoint', { key: null }), 503, 'STORE_UNAVAILABLE');
        },
        { timeout: 10_000, interval: 50 },
      );
    } finally {
      await s3.start();
    }
    // And it serves again once the bucket is back (it re-reads live.json every 100 ms): the tests
    // after this one meet a gateway that has recovered, not one still answering 503 from the outage.
    await vi.waitFor(
      async () => {
        expect((await bucketGateway.request('/log/checkpoint', { key: null })).status).toBe(200);
        expect((await bucketGateway.request('/v1/proof?domain=acme-outdoor.example')).status).toBe(200);
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  it("mvr publish refuses a log that does not extend the bucket's (a build without mvr log pull), and takes it once pulled", async () => {
    const bucket = new S3Bucket(parseS3Url(`s3://${BUCKET}/prod`), s3ConfigFromEnv(s3.env));
    const live = async () => (await bucket.get('live.json')).body.toString('utf8');
    const store = openStore({ url: `s3://${BUCKET}/prod`, s3: s3ConfigFromEnv(s3.env) });
    try {
      // A fresh machine with the same keys but no log: its build starts a log of its own.
      const fresh = await makeProject({ build: false });
      await cp(project.keysDir, fresh.keysDir, { recursive: true });
      await build(fresh, { now: Date.parse('2027-01-01T00:00:00Z') });
      const before = await live();
      const refused = uploadBuild({ recordsDir: fresh.recordsDir, publicDir: fresh.publicDir, to: store });
      await expect(refused).rejects.toMatchObject({ code: 'LOG_INCONSISTENT' });
      await expect(refused).rejects.toThrow(/\(size 34\) does not extend the one published in .* \(size 68, .*mvr log pull/);
      expect(await live()).toBe(before);
      expect((await bucketGateway.request('/log/checkpoint', { key: null })).text).toBe(
        await readFile(join(project.publicDir, 'log/checkpoint'), 'utf8'),
      );

      // The same machine after pulling the published log: its next build extends it, and goes live.
      const pulled = await makeProject({ build: false });
      await cp(project.keysDir, pulled.keysDir, { recursive: true });
      const r = await runCli(['log', 'pull', '--from', `${bucketGateway.url}/log`, '--public', pulled.publicDir]);
      expect(r.code, r.stderr).toBe(0);
      await build(pulled, { now: Date.parse('2027-01-01T00:00:00Z') });
      const summary = await uploadBuild({ recordsDir: pulled.recordsDir, publicDir: pulled.publicDir, to: store });
      expect(await live()).toContain(summary.build);
    } finally {
      await Promise.all([bucket.close(), store.close()]);
    }
  });
});
