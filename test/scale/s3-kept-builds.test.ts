/**
 * Kept builds from `--records s3://` answer as from the records folder: history, change feed,
 * builds of earlier months, `mvr changes`, pruning, and the store going away and coming back; against a
 * local server that checks every request's Signature V4.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { cleanup, type Reply, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectCauseLogged, expectProblem } from '../support/gateway-expect.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { build, makeProject, type Project } from '../support/project.ts';
import { gatewayOnBucket, publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { poll } from '../support/wait.ts';

const BUCKET = 'mvr-records';
const GOLD = 'acme-outdoor.example';

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

/** `count` audits of `shop<i>.example`, every score `score`. */
const shops = (count: number, score: number) =>
  Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      domain: `shop${i}.example`,
      score,
      sub_scores: { visibility: 50, recommendation_rate: 50, technical_readiness: 50 },
      evidence: { ok: true, coverage: 0.8, site_coverage: 0.7, engines_ran: ['chatgpt'] },
      archetype: 'retailer',
      first_seen: '2025-01-01T00:00:00Z',
      last_audited_at: '2026-10-01T00:00:00Z',
    }),
  ).join('\n');

describe('kept builds from s3:// answer as from the records folder', async () => {
  const months = ['2026-10-16', '2026-10-20', '2026-10-25'].map((d) => Date.parse(`${d}T00:00:00Z`));
  let p: Project;
  let folder: TestGateway;
  let bucket: TestGateway;
  let ids: string[];
  /** Every page of the change feed since `since`, with the cursors that led to them. */
  const feed = async (g: TestGateway, since: string) => {
    const pages: { cursor: string; reply: Reply }[] = [];
    for (let cursor: string | null = ''; cursor !== null; ) {
      const reply = await g.request(`/v1/changes?since=${since}${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push({ cursor, reply });
      cursor = (reply.json as { next: string | null }).next;
    }
    return pages;
  };
  const same = async (path: string) => {
    const [f, b] = await Promise.all([folder.request(path), bucket.request(path)]);
    expect({ status: b.status, text: b.text }).toEqual({ status: f.status, text: f.text });
    return b;
  };

  beforeAll(async () => {
    // Two builds kept of two, published one after the other; 1,005 shops change tier (both sides of a
    // change, paged: the folder's paging test has newly audited ones), and acme's score drops.
    p = await makeProject({ build: false });
    await writeFile(join(p.auditsDir, 'shops.jsonl'), shops(1005, 40));
    await build(p, { now: months[0]!, keep: 2 });
    await publish('history', p);
    await writeFile(join(p.auditsDir, 'shops.jsonl'), shops(1005, 60));
    const file = join(p.auditsDir, 'verified.jsonl');
    await writeFile(
      file,
      (await readFile(file, 'utf8'))
        .split('\n')
        .map((l) => (l.includes(`"${GOLD}"`) ? l.replace(/"score":\s*[\d.]+/, '"score": 55') : l))
        .join('\n'),
    );
    await build(p, { now: months[1]!, keep: 2 });
    await publish('history', p);
    // One after the other: each adds its API key to the project's key file.
    folder = await startTestGateway(p);
    bucket = await gatewayOn('history', p);
    ids = ((await folder.request('/v1/builds')).json as { builds: { id: string }[] }).builds.map((b) => b.id);
  });
  afterAll(async () => {
    await Promise.all([folder?.close(), bucket?.close()]);
  });

  it('lists the same kept builds, and serves the same records of a past build', async () => {
    expect(ids).toHaveLength(2);
    expect((await same('/v1/builds')).json).toMatchObject({
      builds: [{ issued_at: '2026-10-20T00:00:00.000Z' }, { issued_at: '2026-10-16T00:00:00.000Z' }],
    });
    for (const id of ids) expect((await same(`/v1/verify?domain=${GOLD}&build=${id}`)).status).toBe(200);
    expect((await bucket.request(`/v1/verify?domain=never-audited.example&build=${ids[1]}`)).json).toMatchObject({ status: 'unverified' });
    expectProblem(await same(`/v1/verify?domain=${GOLD}&build=nope`), 404, 'BUILD_NOT_FOUND');
  });

  it('gives the same history, over HTTP and the MCP tool', async () => {
    expect(((await same(`/v1/history?domain=${GOLD}`)).json as { entries: { score: number }[] }).entries.map((e) => e.score)).toEqual([
      55, 93.5,
    ]);
    await same('/v1/history?domain=not-audited.example');
    const client = await connectHttpClient(bucket.url, bucket.key);
    const result = (await client.callTool({ name: 'merchant_history', arguments: { domain: GOLD } })) as unknown as {
      structuredContent: unknown;
    };
    expect(result.structuredContent).toEqual((await folder.request(`/v1/history?domain=${GOLD}`)).json);
    await client.close();
  });

  it('pages the same change feed with the same cursors; `mvr changes --records s3://` prints it', async () => {
    const [f, b] = await Promise.all([feed(folder, ids[1]!), feed(bucket, ids[1]!)]);
    expect(b.map((x) => (x.reply.json as { changes: unknown[] }).changes.length)).toEqual([1000, 6]);
    const shopChanges = b
      .flatMap(
        (x) => (x.reply.json as { changes: { domain: string; before: { tier: string } | null; after: { tier: string } | null }[] }).changes,
      )
      .filter((c) => c.domain.startsWith('shop'));
    expect(shopChanges.length === 1005 && shopChanges.every((c) => c.before?.tier === 'bronze' && c.after?.tier === 'silver')).toBe(true);
    expect(b.map((x) => [x.cursor, x.reply.status, x.reply.text])).toEqual(f.map((x) => [x.cursor, x.reply.status, x.reply.text]));
    await same(`/v1/changes?since=${ids[0]}`);
    expectProblem(await same('/v1/changes?since=nope'), 404, 'BUILD_NOT_FOUND');
    expectProblem(await same(`/v1/changes?since=${ids[1]}&cursor=5.AAAAAAAA`), 400, 'INVALID_REQUEST');
    const cli = await runCli(
      ['changes', '--since', ids[1]!, '--records', `s3://${BUCKET}/history`, '--trusted-keys', p.keySetFile, '--json'],
      s3.env,
    );
    expect(cli.code, cli.stderr).toBe(0);
    expect(
      cli.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(b.flatMap((x) => (x.reply.json as { changes: unknown[] }).changes));
    expect(cli.stderr).toMatch(/^1,006 changes from /);
  });

  it('after the next publish, a pruned build is BUILD_NOT_FOUND and a cursor of the earlier live build is refused', async () => {
    const cursor = (await feed(bucket, ids[1]!))[1]!.cursor;
    await rm(join(p.auditsDir, 'shops.jsonl')); // dropped: a small build
    await build(p, { now: months[2]!, keep: 2 });
    await publish('history', p);
    const { value } = await poll(
      () => bucket.request('/v1/builds'),
      (r) => (r.json as { builds: { id: string }[] }).builds[0]!.id !== ids[0],
      { timeoutMs: 2000 },
    );
    const now = (value.json as { builds: { id: string }[] }).builds.map((b) => b.id);
    expect(now.slice(1)).toEqual([ids[0]]);
    // The folder's gateway takes the new build at its own refresh: compared once it has.
    await poll(
      () => folder.request('/v1/builds'),
      (r) => (r.json as { builds: { id: string }[] }).builds[0]!.id === now[0],
      { timeoutMs: 2000 },
    );
    await same('/v1/builds');
    // The pruned build's objects are still in the bucket, but it is no longer a kept build.
    expectProblem(await same(`/v1/verify?domain=${GOLD}&build=${ids[1]}`), 404, 'BUILD_NOT_FOUND');
    expectProblem(await same(`/v1/changes?since=${ids[1]}`), 404, 'BUILD_NOT_FOUND');
    await same(`/v1/history?domain=${GOLD}`);
    await same(`/v1/changes?since=${ids[0]}`);
    const refused = expectProblem(await same(`/v1/changes?since=${ids[0]}&cursor=${cursor}`), 400, 'INVALID_REQUEST');
    expect(refused.detail).toMatch(/earlier live build/);
  });

  it('a bucket that cannot be read is STORE_UNAVAILABLE, never an empty list or history', async () => {
    await s3.stop();
    try {
      const { value } = await poll(
        () => bucket.request('/v1/builds'),
        (r) => r.status === 503,
        { timeoutMs: 3000 },
      );
      // Each answer says what (the code); the bucket's name and the network error are in the request's log line only.
      const down = [
        value,
        await bucket.request(`/v1/history?domain=${GOLD}`),
        await bucket.request(`/v1/verify?domain=${GOLD}&build=${ids[0]}`),
        await bucket.request(`/v1/changes?since=${ids[0]}`),
      ];
      for (const r of down) {
        expectCauseLogged(bucket, expectProblem(r, 503, 'STORE_UNAVAILABLE'), [BUCKET]);
        expect(r.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
      }
    } finally {
      await s3.start();
    }
    await poll(
      () => bucket.request('/v1/builds'),
      (r) => r.status === 200,
      { timeoutMs: 5000 },
    );
    await same(`/v1/history?domain=${GOLD}`);
  });
});
