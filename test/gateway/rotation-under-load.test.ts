/**
 * Key rotation under load: clients keep asking for hot and cold records and never-audited domains
 * while the signing key is rotated and a new build swapped in, ten times, with records in a folder
 * and in a bucket. Every answer is a 200 that verifies (a record with the verifier, an absence
 * by its proof). A build whose statement is really forged is still refused whole, logged once,
 * counted, named in /healthz, and the build before it keeps serving.
 */
import { cp, readFile, realpath, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildPhase } from '../../builder/options.ts';
import { swapInBuild } from '../../builder/swap.ts';
import { generatePrivateJwk, loadSigningKey, signRecord } from '../../core/crypto/signing.ts';
import { BUILD_STATEMENT_FILE, CURRENT_LINK } from '../../core/layout.ts';
import { keygen } from '../../keyring/signing-keys.ts';
import { s3ConfigFromEnv } from '../../storage/s3/bucket.ts';
import { cleanup, startTestGateway, type TestGateway, trustingProject, waitForLog } from '../support/gateway.ts';
import { parseMetrics, sampleOf } from '../support/metrics-text.ts';
import { readCurrentRecords } from '../support/outputs.ts';
import { build, makeProject, NOW, type Project, SAMPLE_AUDITS } from '../support/project.ts';
import { publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { startVerifyingClients } from '../support/verifying-clients.ts';
import { poll } from '../support/wait.ts';

const ROTATIONS = 10;
/** Answers each rotation must see once the new build and its key are served (more come during the swap). */
const ANSWERS_AFTER_SWAP = 20;
const BUCKET = 'mvr-rotation';
const METRICS = { metrics: { listen: { host: '127.0.0.1', port: 0 } } };
/** Ten builds on a machine shared with other work. */
const LONG = 240_000;
/** The S3 test server, busy with uploads and reads at once on a loaded machine, can be slow to answer one request. */
const STORE_TIMEOUT_MS = 15_000;

let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3([BUCKET]);
});
afterAll(async () => {
  await cleanup();
  await s3.close();
});

/**
 * A project of the ten verified sample audits: each rotation builds it again (and publishes it, for
 * a bucket), so a small project keeps ten rotations cheap; its records are as real as the full set's.
 */
const smallProject = async () =>
  makeProject({ samples: false, files: { 'verified.jsonl': await readFile(join(SAMPLE_AUDITS, 'verified.jsonl'), 'utf8') } });

/** The domains with a record in the project's live build. */
async function knownDomains(p: Project): Promise<string[]> {
  return [...(await readCurrentRecords(p.recordsDir)).keys()].sort();
}

/** Each build a minute after the one before: the same audits and key at the same time are one build, not a new one. */
let builds = 0;
const buildNext = (p: Project, onPhase?: (phase: BuildPhase) => void) => build(p, { now: NOW + ++builds * 60_000, onPhase });

const liveBuildId = async (p: Project) => basename(await realpath(join(p.recordsDir, CURRENT_LINK)));
const health = async (g: TestGateway) => (await g.request('/healthz', { key: null })).json;
const refusedCount = async (g: TestGateway) =>
  sampleOf(parseMetrics(await (await fetch(g.gateway.metricsUrl!)).text()), 'mvr_builds_refused_total');

/**
 * Makes the project's live build a copy of the current one under a new id whose statement is
 * forged (`how`): signed with a key in no key set, or its bytes altered after signing.
 */
async function swapInForgedBuild(p: Project, how: 'foreign key' | 'altered'): Promise<string> {
  const from = await realpath(join(p.recordsDir, CURRENT_LINK));
  const id = `forged-${how === 'altered' ? 'altered' : 'key'}-${Date.now().toString(36)}`;
  const staging = join(p.recordsDir, `.staging-${id}`);
  await cp(from, staging, { recursive: true });
  const statement = JSON.parse(await readFile(join(from, BUILD_STATEMENT_FILE), 'utf8')) as Record<string, unknown>;
  const forged =
    how === 'altered'
      ? { ...statement, build: id, records: 1 }
      : signRecord({ ...statement, build: id }, loadSigningKey(generatePrivateJwk()));
  await writeFile(join(staging, BUILD_STATEMENT_FILE), JSON.stringify(forged));
  await swapInBuild(p.recordsDir, staging, id);
  return id;
}

/**
 * Ten rotations (keygen, build, and `publish` for a bucket) under load: every answer a verified 200.
 * The clients first have an answer of each kind from the build served, then wait while the key is
 * made and the records signed (nothing the gateway serves changes then); they ask as fast as their
 * answers come from the moment the build writes its key set, through its swap (and the publish),
 * until the new key is served and a few more answers are in: so every step of the swap the gateway
 * takes, answers are being asked for, and each rotation sees records of both keys (decision 0058).
 */
async function rotateUnderLoad(
  g: TestGateway,
  p: Project,
  clientCount: number,
  publish?: (nearlyDone: () => void) => Promise<unknown>,
): Promise<void> {
  const known = await knownDomains(p);
  let answers = 0;
  let kidBefore = (await g.verify(known[0]!)).json.key_id;
  for (let rotation = 0; rotation < ROTATIONS; rotation++) {
    const clients = startVerifyingClients(g, known, { count: clientCount, tag: `r${rotation}`, held: true });
    await clients.firstRound;
    const kid = await keygen(p.keysDir);
    // In a folder the build's key set and swap are what the gateway sees; for a bucket, the publish's last objects.
    await buildNext(p, (phase) => phase === 'key_set' && !publish && clients.go());
    await publish?.(() => clients.go());
    // Under load until the new build and its key are served (bounded), then a few more answers.
    await poll(
      () => g.verify(known[0]!),
      (r) => r.json?.key_id === kid,
      { timeoutMs: 30_000 },
    );
    const seen = clients.answers();
    await poll(
      async () => clients.answers(),
      (n) => n >= seen + ANSWERS_AFTER_SWAP,
      { timeoutMs: 10_000 },
    );
    await clients.stop();
    expect(clients.failures, `rotation ${rotation + 1}`).toEqual([]);
    expect([...clients.keyIds].sort(), `rotation ${rotation + 1}: records of both keys`).toEqual([kidBefore, kid].sort());
    answers += clients.answers();
    kidBefore = kid;
  }
  expect(answers).toBeGreaterThan(ROTATIONS * ANSWERS_AFTER_SWAP);
  expect(
    g.logs.filter((l) => l.msg === 'build refused; the build served before (if any) stays served' || l.msg === 'record rejected'),
  ).toEqual([]);
}

/** A forged build swapped in: refused whole, logged once, counted, named in /healthz; the build before keeps serving verified answers. */
async function forgedBuildRefused(
  g: TestGateway,
  p: Project,
  how: 'foreign key' | 'altered',
  publish: () => Promise<unknown>,
): Promise<void> {
  const known = await knownDomains(p);
  const before = await liveBuildId(p);
  const refusedBefore = await refusedCount(g);
  const forged = await swapInForgedBuild(p, how);
  await publish();
  const line = await waitForLog(g, (l) => l.build === forged, 5000);
  expect(line).toMatchObject({ level: 'warn', msg: 'build refused; the build served before (if any) stays served' });
  expect(String(line.reason)).toContain(
    `build ${forged} refused: ${BUILD_STATEMENT_FILE} does not verify: ${how === 'altered' ? 'BAD_SIGNATURE' : 'UNKNOWN_KEY'}`,
  );

  // The build before still serves every kind of answer, verified, through many refreshes.
  const clients = startVerifyingClients(g, known, { count: 2, maxEach: 60, tag: forged });
  await poll(
    async () => clients.answers(),
    (n) => n >= 100,
    { timeoutMs: 20_000 },
  );
  await clients.stop();
  expect(clients.failures).toEqual([]);
  expect(await health(g)).toMatchObject({ status: 'degraded', records: { ok: true, build: before, refused: forged } });
  expect(g.logs.filter((l) => l.build === forged)).toHaveLength(1);
  expect(await refusedCount(g)).toBe(refusedBefore + 1);

  // The next sound build is taken, and health is ok again.
  await buildNext(p);
  await publish();
  const next = await liveBuildId(p);
  await poll(
    () => health(g),
    (h) => h.records?.build === next,
    { timeoutMs: 10_000 },
  );
  expect(await health(g)).toMatchObject({ status: 'ok', records: { ok: true, refused: null } });
}

describe('records in a folder', () => {
  let p: Project;
  let g: TestGateway;
  beforeAll(async () => {
    p = await smallProject();
    g = await startTestGateway(p, METRICS);
  });
  // Closed once done: its refreshes would go on through the bucket's tests.
  afterAll(() => g.close());

  it('ten key rotations under load: every answer a 200 that verifies', () => rotateUnderLoad(g, p, 2), LONG);

  it.each(['foreign key', 'altered'] as const)(
    'a build whose statement is forged (%s) is refused whole, logged, counted; the previous build keeps serving',
    async (how) => {
      await forgedBuildRefused(g, p, how, async () => undefined);
    },
    LONG,
  );

  it('a forged first build: STORE_UNAVAILABLE as there is nothing to keep, and logged', async () => {
    const q = await makeProject();
    const forged = await swapInForgedBuild(q, 'foreign key');
    const first = await startTestGateway(q);
    const r = await first.verify('acme-outdoor.example');
    expect(r.status).toBe(503);
    expect(r.json.code).toBe('STORE_UNAVAILABLE');
    expect(first.logs.filter((l) => l.build === forged)).toMatchObject([
      { level: 'warn', msg: 'build refused; the build served before (if any) stays served' },
    ]);
    expect(await health(first)).toMatchObject({ status: 'degraded', records: { ok: false, refused: forged } });
    await first.close();
  });
});

describe('records in a bucket', () => {
  let p: Project;
  let g: TestGateway;
  // `nearlyDone` before the last few objects: the build's key set, its manifest, then `live.json`.
  const publish = (nearlyDone?: () => void) =>
    publishTo(s3, BUCKET, 'prod', p, ({ objects, totalObjects }) => objects >= totalObjects - 2 && nearlyDone?.());
  beforeAll(async () => {
    // The ten-record project too, now that the load no longer runs through the build and the whole publish (decision 0058).
    p = await smallProject();
    await publish();
    g = await startTestGateway(p, {
      ...METRICS,
      trust: await trustingProject(p),
      records: { url: `s3://${BUCKET}/prod`, s3: s3ConfigFromEnv(s3.env), publicDir: '/nonexistent', timeoutMs: STORE_TIMEOUT_MS },
    });
  });

  it('ten key rotations under load: every answer a 200 that verifies', () => rotateUnderLoad(g, p, 2, publish), LONG);

  it(
    'a build whose statement is forged is refused whole, logged, counted; the previous build keeps serving',
    async () => {
      await forgedBuildRefused(g, p, 'foreign key', publish);
    },
    LONG,
  );
});
