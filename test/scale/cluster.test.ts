/**
 * Past one machine, all at once: three gateway processes (`mvr serve --workers 3`, node:cluster
 * balancing connections) on one Redis and one bucket, under load, while a key is revoked, a new
 * build is published, Redis restarts, and the store goes away and comes back. Every answer is
 * checked: a 200 must be a record of the domain asked that verifies against the published key
 * set (and never "never audited" for an audited domain); a revoked key is never accepted more
 * than a second after its revocation; 503 only while the store is away; and every process
 * recovers by itself. A second run holds one quota across the three processes.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../access/api-keys.ts';
import { redisApiKeyTable } from '../../access/api-keys-redis.ts';
import { connectRedis, type RedisClient } from '../../access/redis.ts';
import { verifyRecordNode } from '../../core/crypto/signing.ts';
import { ask, type ClusterSetting, startGatewayCluster, stopCluster, untilEveryProcess } from '../support/cluster.ts';
import { cleanup } from '../support/gateway.ts';
import { liveRecords, publishedKeySet } from '../support/outputs.ts';
import { needing } from '../support/programs.ts';
import { build, copyProject, makeProject, type Project } from '../support/project.ts';
import { REDIS, startRedis, type TestRedis } from '../support/redis-server.ts';
import { publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { poll, sleep } from '../support/wait.ts';

const BUCKET = 'mvr-cluster';
/**
 * Each of the six load clients pauses this long after each answer: a bounded load (about 150
 * requests a second on a quiet 2-core machine, concurrent on every process) rather than flat out.
 * Flat out, the load only burnt both cores for as long as each event took to reach every process.
 */
const PAUSE_MS = 25;

describe.skipIf(!REDIS.path)(needing(REDIS, 'three gateways on one Redis and one bucket (real redis-server, S3 with Signature V4)'), () => {
  let redis: TestRedis;
  let client: RedisClient;
  let s3: TestS3;
  let project: Project;
  /** The project's next month, built before the load starts: the test publishes it under load. */
  let nextMonth: Project;
  let audited: string[];
  const children: ChildProcess[] = [];

  const publish = async (p: Project) => {
    await publishTo(s3, BUCKET, 'prod', p);
  };
  /** The cluster on this test's bucket and Redis, with its processes in `children`. */
  const cluster = (): ClusterSetting => ({
    records: `s3://${BUCKET}/prod`,
    trustedKeys: project.keySetFile,
    redisUrl: redis.url,
    env: s3.env,
    children,
  });
  const startCluster = (rateLimit: number) => startGatewayCluster(cluster(), rateLimit);

  beforeAll(async () => {
    [redis, s3, project] = await Promise.all([startRedis({ persistent: true }), startS3([BUCKET]), makeProject()]);
    client = await connectRedis(redis.url);
    audited = [...(await liveRecords(project)).keys()];
    nextMonth = await copyProject(project);
    // Built here, not under load: the test is about publishing it, and a build there only stretched the load phase.
    await Promise.all([publish(project), build(nextMonth, { now: Date.parse('2026-12-01T00:00:00Z') })]);
  }, 60_000);
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await client.close().catch(() => undefined);
    await cleanup();
    await Promise.all([redis.stop(), s3.close()]);
  });

  it('under load, through a revocation, a publish, a Redis restart and a store outage: zero wrong answers, and every process recovers', async () => {
    const table = redisApiKeyTable(client, redis.url);
    const steady = await createApiKey(table, 'steady');
    const doomed = await createApiKey(table, 'doomed');
    const cluster = await startCluster(1_000_000);
    const { keySet } = await publishedKeySet(project);
    const events: Record<string, number> = {};
    const wrong: string[] = [];
    const counts: Record<string, number> = {};
    let revokedAcceptedLate = 0;
    let lastDoomedOk = 0;
    let firstOkAfterStoreUp = Infinity;
    const afterStoreUp: { sent: number; text: string }[] = [];
    let running = true;

    /** When an answer came, after the last event before it (for a failure message). */
    const phaseOf = (at: number) => {
      const last = Object.entries(events)
        .filter(([, t]) => t <= at)
        .sort((a, b) => b[1] - a[1])[0];
      return last ? `${Math.round(at - last[1])} ms after ${last[0]}` : 'before any event';
    };
    const check = (domain: string, key: 'steady' | 'doomed', r: { status: number; text: string; at: number }, sent: number) => {
      counts[r.status] = (counts[r.status] ?? 0) + 1;
      if (r.status === 200) {
        const record = JSON.parse(r.text) as { domain: string; status: string };
        if (record.domain !== domain) wrong.push(`${domain}: a record of ${record.domain}`);
        else if (audited.includes(domain) && record.status === 'unverified') wrong.push(`${domain}: audited, answered as never audited`);
        else if (audited.includes(domain) && !verifyRecordNode(record, keySet).valid) wrong.push(`${domain}: does not verify`);
        if (key === 'doomed' && events.revoked !== undefined && r.at > events.revoked + 1000) revokedAcceptedLate++;
        if (key === 'doomed') lastDoomedOk = Math.max(lastDoomedOk, r.at);
        if (events.storeUp !== undefined) firstOkAfterStoreUp = Math.min(firstOkAfterStoreUp, r.at);
      } else if (r.status === 503) {
        // Inside the outage: from the store going down until every process is seen answering again
        // (judged after the load, when that moment is known, by when each request was sent), however long recovery takes here.
        if (events.storeDown === undefined || r.at < events.storeDown)
          wrong.push(`${domain}: 503 before the store outage (${phaseOf(r.at)}): ${r.text}`);
        else if (events.storeUp !== undefined)
          afterStoreUp.push({ sent, text: `${domain}: 503 after every process recovered (${phaseOf(r.at)}): ${r.text}` });
      } else if (!(r.status === 401 && key === 'doomed' && events.revoked !== undefined)) wrong.push(`${domain}: ${r.status} ${r.text}`);
    };
    const client_ = async (n: number) => {
      for (let i = 0; running; i++) {
        const domain = i % 4 === 3 ? `never-audited-${n}-${i % 50}.example` : audited[(i * 7 + n) % audited.length]!;
        const key = i % 5 === 0 ? 'doomed' : 'steady';
        try {
          const sent = performance.now();
          check(domain, key, await ask(cluster.url, domain, key === 'doomed' ? doomed.key : steady.key), sent);
        } catch (error) {
          wrong.push(`${domain}: no answer (${(error as Error).message})`);
        }
        await sleep(PAUSE_MS);
      }
    };
    const answered = () => Object.values(counts).reduce((a, b) => a + b, 0);
    /** Lets the load run on until it has had `n` more answers (each phase is seen under load, not after a fixed time). */
    const underLoad = async (n: number, until: () => boolean = () => true) => {
      const from = answered();
      await poll(
        async () => answered() - from >= n && until(),
        (done) => done,
        { timeoutMs: 20_000, intervalMs: 20 },
      );
    };
    const started = performance.now();
    const load = Promise.all(Array.from({ length: 6 }, (_, n) => client_(n)));

    await underLoad(100);
    events.revoked = performance.now();
    await revokeApiKey(table, doomed.entry.id);
    await untilEveryProcess(cluster.url, audited[0]!, doomed.key, (r) => r.status === 401);
    await underLoad(100);
    await publish(nextMonth);
    events.published = performance.now();
    const newBuild = (r: { status: number; text: string }) =>
      r.status === 200 && (JSON.parse(r.text) as { issued_at: string }).issued_at === '2026-12-01T00:00:00.000Z';
    await untilEveryProcess(cluster.url, audited[0]!, steady.key, newBuild);
    await underLoad(100);
    await redis.stop(true);
    await underLoad(100); // known keys keep working while Redis is down
    await redis.start();
    events.redisBack = performance.now();
    await underLoad(100);
    events.storeDown = performance.now();
    await s3.stop();
    await underLoad(50, () => (counts[503] ?? 0) > 0); // the outage is seen
    await s3.start();
    events.storeUp = performance.now();
    await underLoad(1, () => firstOkAfterStoreUp !== Infinity);
    // Every process answers again (new connections, handed out in turn); from then on, no 503 at all.
    await untilEveryProcess(cluster.url, audited[1]!, steady.key, (r) => r.status === 200, 12);
    events.recovered = performance.now();
    await underLoad(100);
    running = false;
    await load;
    const seconds = (performance.now() - started) / 1000;

    for (const late of afterStoreUp) if (late.sent > events.recovered!) wrong.push(late.text);
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const recoveryMs = Math.round(firstOkAfterStoreUp - events.storeUp!);
    const revocationMs = Math.round(Math.max(0, lastDoomedOk - events.revoked!));
    console.log(`cluster: store back -> first 200 in ${recoveryMs} ms; revoked key last accepted ${revocationMs} ms after the revocation`);
    console.log(
      `cluster: ${total} requests in ${seconds.toFixed(1)} s (${Math.round(total / seconds)} req/s) by status ${JSON.stringify(counts)}; wrong answers ${wrong.length}; revoked key accepted > 1 s after revocation ${revokedAcceptedLate}`,
    );
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(revokedAcceptedLate).toBe(0);
    expect(counts[503] ?? 0).toBeGreaterThan(0); // the outage was seen (and is over everywhere: above)
    await stopCluster(cluster.child);
  }, 120_000);

  it('one quota per key across the three processes (within 5%)', async () => {
    // 300 a minute: each process leases 1% (3) at a time, so the three can lose at most 9 (3%) to leases
    // left when a window ends; twice the quota asked is 600 requests.
    const quota = 300;
    const cluster = await startCluster(quota);
    const { key } = await createApiKey(redisApiKeyTable(client, redis.url), 'quota');
    // Each process has the new key once it answers it on a new connection (the count below starts after).
    await untilEveryProcess(cluster.url, audited[0]!, key, (r) => r.status === 200 || r.status === 429, 3);
    // Quota windows are clock minutes shared by the three processes; the count may straddle two.
    // Each answer names its window: its RateLimit field says how many seconds are left of it.
    const answers: { status: number; window: number }[] = [];
    const askCounted = async () => {
      const res = await fetch(`${cluster.url}/v1/verify?domain=${audited[0]}`, { headers: { authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      const left = Number(/;t=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1] ?? NaN);
      answers.push({ status: res.status, window: Math.round((Date.now() + left * 1000) / 60_000) });
    };
    for (let i = 0; i < 2 * quota; i += 12) await Promise.all(Array.from({ length: 12 }, askCounted));
    expect(answers.filter((a) => (a.status !== 200 && a.status !== 429) || Number.isNaN(a.window))).toEqual([]);
    const windows = [...new Set(answers.map((a) => a.window))];
    expect(windows.length).toBeLessThanOrEqual(2);
    for (const w of windows) {
      const inWindow = answers.filter((a) => a.window === w);
      const allowed = inWindow.filter((a) => a.status === 200).length;
      console.log(
        `cluster quota: ${allowed} of ${inWindow.length} requests allowed in one window against a quota of ${quota} across 3 processes`,
      );
      expect(allowed).toBeLessThanOrEqual(quota);
      // The three asks above may have taken three of the first window's quota.
      expect(allowed).toBeGreaterThanOrEqual(Math.min(quota - 3, inWindow.length) * 0.95);
    }
    await stopCluster(cluster.child);
  }, 60_000);
});
