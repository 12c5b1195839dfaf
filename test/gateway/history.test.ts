/**
 * Kept builds on the real gateway: `mvr build --keep`, `GET /v1/builds`, a record of a past build
 * (`&build=`), a domain's history, the change feed the build wrote, and the MCP tool
 * `merchant_history`. Records of a past build still verify after a key rotation.
 */
import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyRecordNode } from '../../core/crypto/signing.ts';
import { keygen, retireKey } from '../../keyring/signing-keys.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { publishedKeySet } from '../support/outputs.ts';
import { placeIn } from '../support/packs.ts';
import { build, makeProject } from '../support/project.ts';

afterAll(cleanup);

const GOLD = 'acme-outdoor.example';
/** The months after the plain project's build (issued NOW_ISO, 2026-11-01), each a build of its own. */
const [DEC, JAN, FEB] = ['2026-12-01', '2027-01-01', '2027-02-01'].map((d) => Date.parse(`${d}T00:00:00Z`)) as [number, number, number];

describe('kept builds: list, past records, history, changes', async () => {
  // Four monthly builds (the plain project's, then three), keeping three; from the third month on, acme's score is lower.
  const project = await makeProject();
  for (const [i, now] of [DEC, JAN, FEB].entries()) {
    if (i === 1) {
      const file = join(project.auditsDir, 'verified.jsonl');
      const lines = (await readFile(file, 'utf8')).split('\n');
      await writeFile(file, lines.map((l) => (l.includes(`"${GOLD}"`) ? l.replace(/"score":\s*[\d.]+/, '"score": 55') : l)).join('\n'));
    }
    await build(project, { now, keep: 3 });
  }
  const g = await startTestGateway(project);
  const builds = ((await g.request('/v1/builds')).json as { builds: { id: string; issued_at: string; records: number }[] }).builds;

  it('lists the kept builds newest first, the live one first; older ones are removed', async () => {
    expect(builds.map((b) => b.issued_at)).toEqual(['2027-02-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z']);
    expect(Object.keys(builds[0]!).sort()).toEqual(['id', 'issued_at', 'records']);
    expect((await readdir(join(project.recordsDir, 'builds'))).filter((n) => !n.startsWith('.')).sort()).toEqual(
      builds.map((b) => b.id).sort(),
    );
  });

  it('serves the signed record of a past build, which verifies on its own; unknown builds are 404', async () => {
    const past = await g.request(`/v1/verify?domain=${GOLD}&build=${builds[2]!.id}`);
    expect(past.status).toBe(200);
    expect(past.json).toMatchObject({ domain: GOLD, issued_at: '2026-12-01T00:00:00.000Z' });
    expect(verifyRecordNode(past.json, (await publishedKeySet(project)).keySet)).toMatchObject({ valid: true });
    expect((await g.request(`/v1/verify?domain=${GOLD}&build=${builds[0]!.id}`)).bytes).toEqual((await g.verify(GOLD)).bytes);
    expect((await g.request(`/v1/verify?domain=never-audited.example&build=${builds[1]!.id}`)).json).toMatchObject({
      status: 'unverified',
    });
    expectProblem(await g.request(`/v1/verify?domain=${GOLD}&build=nope`), 404, 'BUILD_NOT_FOUND');
  });

  it("gives a domain's history, newest first, one entry per kept build", async () => {
    const r = await g.request(`/v1/history?domain=https://www.${GOLD}/x`);
    const h = r.json as { domain: string; entries: { build: string; score: number; tier: string }[] };
    expect(h.domain).toBe(GOLD);
    expect(h.entries.map((e) => e.build)).toEqual(builds.map((b) => b.id));
    expect(h.entries.map((e) => e.score)).toEqual([55, 55, 93.5]);
    expectProblem(await g.request('/v1/history?domain=co.uk'), 400, 'INVALID_DOMAIN');
  });

  it('pages through the change feed the build computed', async () => {
    const r = await g.request(`/v1/changes?since=${builds[2]!.id}`);
    expect(r.json).toMatchObject({
      from: builds[2]!.id,
      to: builds[0]!.id,
      next: null,
      changes: [{ domain: GOLD, before: { score: 93.5, tier: 'gold' }, after: { score: 55, tier: 'silver' } }],
    });
    expect((await g.request(`/v1/changes?since=${builds[1]!.id}`)).json).toMatchObject({ changes: [] });
    expect((await g.request(`/v1/changes?since=${builds[0]!.id}`)).json).toMatchObject({ changes: [], next: null });
    expectProblem(await g.request('/v1/changes?since=nope'), 404, 'BUILD_NOT_FOUND');
    expectProblem(await g.request('/v1/changes'), 400, 'INVALID_REQUEST');
    expectProblem(await g.request(`/v1/changes?since=${builds[2]!.id}&cursor=5.AAAAAAAA`), 400, 'INVALID_REQUEST');
    expectProblem(await g.request('/v1/builds', { key: null }), 401, 'UNAUTHORIZED');
  });

  it('`mvr changes --since ID --json` prints the same feed for scripts, one change per line', async () => {
    const [r, unknown] = await Promise.all([
      runCli(['changes', '--since', builds[2]!.id, '--records', project.recordsDir, '--public', project.publicDir, '--json']),
      runCli(['changes', '--since', 'nope', '--records', project.recordsDir]),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(((await g.request(`/v1/changes?since=${builds[2]!.id}`)).json as { changes: unknown[] }).changes);
    expect(r.stderr).toMatch(/^1 change from /);
    expect(unknown.code).toBe(1);
  });

  it('a build removed after the list was read is BUILD_NOT_FOUND, never "no record" (and history leaves it out)', async () => {
    expect((await g.request('/v1/builds')).json).toMatchObject({ builds: builds.map(({ id }) => ({ id })) });
    await rm(join(project.recordsDir, 'builds', builds[2]!.id), { recursive: true });
    expectProblem(await g.request(`/v1/verify?domain=${GOLD}&build=${builds[2]!.id}`), 404, 'BUILD_NOT_FOUND');
    const h = (await g.request(`/v1/history?domain=${GOLD}`)).json as { entries: { build: string }[] };
    expect(h.entries.map((e) => e.build)).toEqual([builds[0]!.id, builds[1]!.id]);
  });

  it('a past record its build\'s map lists, its pack gone or not a regular file, is 503 UNAVAILABLE (never "not there"), and is back once it is', async () => {
    const { file } = await placeIn(join(project.recordsDir, 'builds', builds[1]!.id), GOLD);
    await rename(file, `${file}.away`);
    try {
      expectProblem(await g.request(`/v1/verify?domain=${GOLD}&build=${builds[1]!.id}`), 503, 'UNAVAILABLE');
      expectProblem(await g.request(`/v1/history?domain=${GOLD}`), 503, 'UNAVAILABLE');
      await mkdir(file);
      expectProblem(await g.request(`/v1/verify?domain=${GOLD}&build=${builds[1]!.id}`), 503, 'UNAVAILABLE');
      expectProblem(await g.request(`/v1/history?domain=${GOLD}`), 503, 'UNAVAILABLE');
    } finally {
      await rm(file, { recursive: true, force: true });
      await rename(`${file}.away`, file);
    }
    expect((await g.request(`/v1/verify?domain=${GOLD}&build=${builds[1]!.id}`)).status).toBe(200);
  });

  it('the MCP tool merchant_history answers the same', async () => {
    const client = await connectHttpClient(g.url, g.key);
    const result = (await client.callTool({ name: 'merchant_history', arguments: { domain: GOLD } })) as unknown as {
      structuredContent: unknown;
    };
    expect(result.structuredContent).toEqual((await g.request(`/v1/history?domain=${GOLD}`)).json);
    await client.close();
    await g.close();
  });
});

/** `count` audits of `shop<i>.example`, every score `score`. */
const syntheticAudits = (count: number, score: number) =>
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

describe('the change feed pages, and kept builds keep their keys', () => {
  /** A gateway over the plain project's build and next month's (the feed's `since` is the former). */
  let g: TestGateway;
  let since: string;
  /** Every change in the feed since `since`, page by page, and each page's size. */
  const wholeFeed = async () => {
    const changes: {
      domain: string;
      before: { status: string; tier: string; score: number } | null;
      after: { status: string; tier: string; score: number } | null;
    }[] = [];
    const sizes: number[] = [];
    for (let cursor: string | null = ''; cursor !== null; ) {
      const page = (await g.request(`/v1/changes?since=${since}${cursor ? `&cursor=${cursor}` : ''}`)).json as {
        changes: typeof changes;
        next: string | null;
      };
      sizes.push(page.changes.length);
      changes.push(...page.changes);
      cursor = page.next;
    }
    return { changes, sizes };
  };
  beforeAll(async () => {
    // Next month: 2,000 shops newly audited (enough for three pages; one build of them, not two: a change
    // with a "before" is checked above and in the bucket's feed), one domain dropped, one flagged, one new.
    const project = await makeProject();
    await writeFile(join(project.auditsDir, 'many.jsonl'), syntheticAudits(2000, 60));
    const file = join(project.auditsDir, 'verified.jsonl');
    const lines = (await readFile(file, 'utf8')).split('\n');
    const gold = lines.find((l) => l.includes(`"${GOLD}"`))!;
    const next = lines
      .filter((l) => !l.includes('bluebird-books.example')) // dropped
      .map((l) => (l.includes('"Corner-Bakery.example"') ? l.replace(/^\{/, '{"flagged": true, ') : l)); // flagged: status only
    await writeFile(file, [...next, gold.replace(GOLD, 'brand-new.example')].join('\n')); // newly audited
    await build(project, { now: DEC });
    g = await startTestGateway(project);
    since = ((await g.request('/v1/builds')).json as { builds: { id: string }[] }).builds[1]!.id;
  });
  afterAll(() => g.close());

  it('pages 2,003 changes 1,000 at a time with a cursor, in a stable order, each domain once', async () => {
    const { changes, sizes } = await wholeFeed();
    expect(sizes).toEqual([1000, 1000, 3]);
    const seen = changes.map((c) => c.domain);
    expect(new Set(seen).size).toBe(2003);
    const shops = changes.filter((c) => /^shop\d+\.example$/.test(c.domain));
    expect(shops).toHaveLength(2000);
    expect(shops.every((c) => c.before === null && c.after?.tier === 'silver')).toBe(true);
    expect((await wholeFeed()).changes.map((c) => c.domain)).toEqual(seen); // the same order again
  });

  it('names newly audited and dropped domains (before or after null) and a change of status alone', async () => {
    const { changes } = await wholeFeed();
    expect(changes.filter((c) => !c.domain.startsWith('shop')).sort((a, b) => a.domain.localeCompare(b.domain))).toEqual([
      { domain: 'bluebird-books.example', before: { status: 'verified', tier: 'gold', score: 86 }, after: null },
      { domain: 'brand-new.example', before: null, after: { status: 'verified', tier: 'gold', score: 93.5 } },
      {
        domain: 'corner-bakery.example',
        before: { status: 'verified', tier: 'gold', score: 81.2 },
        after: { status: 'flagged', tier: 'gold', score: 81.2 },
      },
    ]);
  });

  it("a folder holding one build's files itself (a copy) serves records but says it keeps no history", async () => {
    const project = await makeProject();
    const copy = join(project.root, 'copy');
    await cp(join(project.recordsDir, 'current'), copy, { recursive: true, dereference: true });
    const g = await startTestGateway(project, { records: { url: copy } });
    expect((await g.verify(GOLD)).status).toBe(200);
    for (const path of ['/v1/builds', `/v1/history?domain=${GOLD}`, `/v1/changes?since=x`]) {
      expect(expectProblem(await g.request(path), 404, 'BUILD_NOT_FOUND').detail, path).toMatch(
        /keeps no build history: the records folder holds one build's files itself/,
      );
    }
    await g.close();
  });

  it('a retired key stays in the key set while a kept build has records signed by it', async () => {
    const project = await makeProject(); // its build is signed by its key
    const oldKid = project.kid!;
    await keygen(project.keysDir);
    await retireKey(project.keysDir, oldKid);
    await build(project, { now: DEC, keep: 2 });
    expect((await publishedKeySet(project)).keySet.keys.map((k) => k.kid)).toContain(oldKid);
    const g = await startTestGateway(project);
    const builds = ((await g.request('/v1/builds')).json as { builds: { id: string }[] }).builds;
    expect((await g.request(`/v1/verify?domain=${GOLD}&build=${builds[1]!.id}`)).json).toMatchObject({ key_id: oldKid });
    await g.close();
    // Once no kept build was signed by it, it leaves.
    await build(project, { now: JAN, keep: 2 });
    expect((await publishedKeySet(project)).keySet.keys.map((k) => k.kid)).not.toContain(oldKid);
  });
});
