/**
 * Kept builds reach a bucket through the real commands: a publish uploads the kept builds the
 * bucket lacks, and `mvr pull` brings their manifests and indexes to a fresh machine, whose next
 * build keeps the history; against a local server that checks every request's Signature V4.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { build, makeProject, type Project } from '../support/project.ts';
import { gatewayOnBucket, publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';

const BUCKET = 'mvr-records';
const GOLD = 'acme-outdoor.example';
/** The month after the plain project's build (2026-11-01). */
const DEC = Date.parse('2026-12-01T00:00:00Z');

let s3: TestS3;
const publish = (prefix: string, p: Project) => publishTo(s3, BUCKET, prefix, p);
const gatewayOn = (prefix: string, p: Project) => gatewayOnBucket(s3, BUCKET, prefix, p);

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
});
afterAll(async () => {
  await cleanup();
  await s3.close();
});

describe('kept builds from s3:// answer as from the records folder', () => {
  it('a publish uploads the kept builds the bucket lacks, before live.json', async () => {
    const small = await makeProject(); // its build (2026-11-01) is the earlier one
    await build(small, { now: DEC, keep: 2 });
    expect(await publish('late', small)).toMatchObject({ earlierBuilds: 1, objects: 2 * 7 + 4 }); // two builds of one pack, its index, an index, a domain map, a statement, the compact answers and a manifest; the live one's change feed, kept list, key set, live.json
    const local = await startTestGateway(small);
    const late = await gatewayOn('late', small);
    const earlier = ((await local.request('/v1/builds')).json as { builds: { id: string }[] }).builds[1]!.id;
    for (const path of [
      '/v1/builds',
      `/v1/history?domain=${GOLD}`,
      `/v1/verify?domain=${GOLD}&build=${earlier}`,
      `/v1/changes?since=${earlier}`,
    ]) {
      expect((await late.request(path)).text).toBe((await local.request(path)).text);
    }
    await Promise.all([local.close(), late.close()]);
  });

  it("a build on a fresh machine keeps the bucket's history once `mvr pull` brought the kept builds' manifests and indexes", async () => {
    const first = await makeProject(); // built 2026-11-01
    const { build: firstId } = await publish('fresh', first);
    // CI: a new runner with the same keys and next month's audits, and no records folder.
    const next = await makeProject({ build: false, sign: false });
    await cp(first.keysDir, next.keysDir, { recursive: true });
    const file = join(next.auditsDir, 'verified.jsonl');
    await writeFile(
      file,
      (await readFile(file, 'utf8'))
        .split('\n')
        .map((l) => (l.includes(`"${GOLD}"`) ? l.replace(/"score":\s*[\d.]+/, '"score": 55') : l))
        .join('\n'),
    );
    const mvr = (args: string[]) => runCli(args, s3.env);
    const pull = await mvr(['pull', '--from', `s3://${BUCKET}/fresh`, '--records', next.recordsDir, '--json']);
    expect(pull.code, pull.stderr).toBe(0);
    const pulled = JSON.parse(pull.stdout) as { builds: number; live: string };
    expect(pulled).toMatchObject({ builds: 1, live: firstId });
    const summary = await build(next, { now: DEC });
    expect(summary).toMatchObject({ keptBuilds: 2, changes: 1 });
    expect(await publish('fresh', next)).toMatchObject({ earlierBuilds: 0 });
    const g = await gatewayOn('fresh', next);
    expect(((await g.request('/v1/builds')).json as { builds: { id: string }[] }).builds.map((b) => b.id)).toEqual([
      summary.buildId,
      firstId,
    ]);
    expect((await g.request(`/v1/changes?since=${firstId}`)).json).toMatchObject({
      from: firstId,
      to: summary.buildId,
      changes: [{ domain: GOLD, before: { score: 93.5 }, after: { score: 55 } }],
      next: null,
    });
    expect(((await g.request(`/v1/history?domain=${GOLD}`)).json as { entries: { score: number }[] }).entries.map((e) => e.score)).toEqual([
      55, 93.5,
    ]);
    expect((await g.request(`/v1/verify?domain=${GOLD}&build=${firstId}`)).json).toMatchObject({ score: 93.5 });
    await g.close();
    // A records folder with a live build of its own is never mixed with pulled ones.
    // (And anything but s3://BUCKET/PREFIX is a usage error naming the flag.)
    const [again, notS3] = await Promise.all([
      mvr(['pull', '--from', `s3://${BUCKET}/fresh`, '--records', next.recordsDir]),
      mvr(['pull', '--from', 'https://records.example/', '--records', next.recordsDir]),
    ]);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/already has a live build/) });
    expect(notS3).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--from https:\/\/records\.example\/: not s3:\/\/BUCKET\/PREFIX/),
    });
  });
});
