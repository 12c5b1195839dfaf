/**
 * Newest means last (decision 0077), with three real witnesses and real builds: a store pointed back
 * at last month's build, its proofs made against the newest checkpoint, answers "never audited" for a
 * merchant audited this month; the package, `mvr verify --log` and `mvr verify --private --log`
 * refuse it as BUILD_SUPERSEDED, with or without a policy. Rolled back with its own old checkpoint,
 * it holds under a maximum age only while that checkpoint's cosignatures are fresh. A build short of
 * its quorum appends the live statement again, so answers stay current before and after the
 * refresh; and an answer about a named kept build is not refused.
 */
import { readFile, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ageOf, gatewaySource, parsePolicy, verifyOnline, verifyOnlinePrivately } from '@merchant-verify/verifier';
import { formatCheckpoint, parseCheckpoint, parseNote, parseTlogProof } from '@merchant-verify/verifier/internal/tlog';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../core/error-registry.ts';
import { BUILD_CHECKPOINT_FILE, BUILD_SERVED_CHECKPOINT_FILE, BUILDS_DIR, CURRENT_LINK } from '../../core/layout.ts';
import { signNote } from '../../keyring/log-key.ts';
import { audit, jsonl } from '../support/audits.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { gatewayOver, logDir, vkeyFile } from '../support/logged-project.ts';
import { GOLD as GOLD_DOMAIN, removeTempDirs, UNAUDITED } from '../support/project.ts';
import { checkpointSize, type WitnessedProject, witnessedProject } from '../support/witnessed-project.ts';

const HOUR = 3_600_000;
/** Audited this month only: last month's build has no record of it. */
const FLAGGED = 'flagged-this-month.example';

let w: WitnessedProject;
let policyText: string;
let vkey: string;
/** Last month's build and this month's (live). */
let nov: string;
let dec: string;
/** When the witnesses cosigned November's checkpoint (their injected clock). */
let novCosignedAt: number;
/** What the rolled-back store served: an absence proof and a prefix answer (with its prefix), both superseded. */
const rolledBack: { absence?: unknown; prefix?: { prefix: string; answer: unknown } } = {};

const liveId = async () => basename(await realpath(join(w.p.recordsDir, CURRENT_LINK)));
const buildDir = (id: string) => join(w.p.recordsDir, BUILDS_DIR, id);

/** Points `current` at `id`, as an operator (or an attacker with the store) would: one rename. */
async function pointCurrentAt(id: string): Promise<void> {
  const tmp = join(w.p.recordsDir, `${CURRENT_LINK}.tmp-test`);
  await rm(tmp, { force: true });
  await symlink(join(BUILDS_DIR, id), tmp, 'dir');
  await rename(tmp, join(w.p.recordsDir, CURRENT_LINK));
}

/** A gateway started over the store as it is now (one per state: no waiting on its refresh). */
async function withGateway<T>(run: (g: TestGateway) => Promise<T>): Promise<T> {
  const g = await gatewayOver(w.p);
  try {
    return await run(g);
  } finally {
    await g.close();
  }
}

/** The package's online verification of `domain`'s answer, with the log key and, when told, the policy. */
const online = (g: TestGateway, domain: string, o: { policy?: boolean; maxAgeMs?: number; now?: number; build?: string } = {}) =>
  verifyOnline({
    domain,
    source: gatewaySource({ baseUrl: g.url, apiKey: g.key, ...(o.build ? { build: o.build } : {}) }),
    vkey,
    log: true,
    ...(o.policy ? { policy: parsePolicy(policyText) } : {}),
    ...(o.maxAgeMs ? { maxAgeMs: o.maxAgeMs } : {}),
    now: o.now ?? w.witnesses[0]!.now.ms,
    ...(o.build ? { asOfBuild: o.build } : {}),
  });

const privately = (g: TestGateway, domain: string, policy = false) =>
  verifyOnlinePrivately({
    domain,
    source: gatewaySource({ baseUrl: g.url, apiKey: g.key }),
    vkey,
    log: true,
    ...(policy ? { policy: parsePolicy(policyText) } : {}),
    now: w.witnesses[0]!.now.ms,
  });

const cli = (g: TestGateway, args: string[]) =>
  runCli(['verify', ...args, '--log', '--log-key', vkeyFile(w.p), '--base-url', g.url, '--api-key', g.key, '--json']);

/** The statement proof's index and its checkpoint's size, of `domain`'s absence proof as the gateway serves it. */
async function statementPlace(g: TestGateway, domain: string): Promise<{ index: number; size: number }> {
  const proof = parseTlogProof((await g.request(`/v1/absence?domain=${domain}`)).json.statement_proof);
  return { index: proof.index, size: parseCheckpoint(parseNote(proof.checkpoint).text).size };
}

beforeAll(async () => {
  w = await witnessedProject();
  policyText = await w.policyWith();
  novCosignedAt = w.witnesses[0]!.now.ms;
  const first = await w.build('2026-11-01T00:00:00Z');
  if (first.code !== 0) throw new Error(first.stdout + first.stderr);
  vkey = (await readFile(vkeyFile(w.p), 'utf8')).trim();
  nov = await liveId();
  await writeFile(join(w.p.auditsDir, 'flagged.jsonl'), jsonl(audit(FLAGGED, { score: 12 })));
  w.setClock(novCosignedAt + HOUR);
  const second = await w.build('2026-12-01T00:00:00Z');
  if (second.code !== 0) throw new Error(second.stdout + second.stderr);
  dec = await liveId();
});
afterAll(async () => {
  await cleanup();
  await w.close();
  await removeTempDirs();
});

describe.sequential('an answer is current when its statement is the last entry of its checkpoint', () => {
  it("the live build's answers hold, with and without a policy; the flagged merchant has a record", async () => {
    await withGateway(async (g) => {
      const now = w.witnesses[0]!.now.ms;
      const plain = await online(g, UNAUDITED);
      expect(plain.code).toBe('NEVER_AUDITED');
      // Without a policy, the build's age only; with one, the newest cosignature's too.
      expect(ageOf(plain, Date.parse('2026-12-03T00:00:00Z'))).toEqual({
        issuedAt: '2026-12-01T00:00:00.000Z',
        buildAgeSeconds: 2 * 86_400,
        newestCosignatureAt: null,
        newestCosignatureAgeSeconds: null,
      });
      const witnessed = await online(g, UNAUDITED, { policy: true });
      expect(witnessed.code).toBe('NEVER_AUDITED');
      expect(ageOf(witnessed, now + HOUR)).toMatchObject({ newestCosignatureAt: now, newestCosignatureAgeSeconds: 3600 });
      expect((await privately(g, UNAUDITED, true)).code).toBe('NEVER_AUDITED');
      expect((await g.verify(FLAGGED)).json.status).not.toBe('unverified');
    });
  });

  it('a store rolled back to last month, its proofs against the newest checkpoint: BUILD_SUPERSEDED everywhere', async () => {
    // The newest checkpoint (December's, cosigned) holds November's statement too: the log only grows.
    await writeFile(join(buildDir(nov), BUILD_SERVED_CHECKPOINT_FILE), await readFile(join(buildDir(dec), BUILD_CHECKPOINT_FILE)));
    await pointCurrentAt(nov);
    try {
      await withGateway(async (g) => {
        expect((await g.verify(FLAGGED)).json.status).toBe('unverified');
        const place = await statementPlace(g, FLAGGED);
        expect(place.index).toBeLessThan(place.size - 1);
        for (const policy of [false, true]) {
          const v = await online(g, FLAGGED, { policy });
          expect(v.code, `policy ${policy}`).toBe('BUILD_SUPERSEDED');
          expect(v.absence).toMatchObject({ valid: false, code: 'BUILD_SUPERSEDED' });
          if (!v.absence!.valid) expect(v.absence!.message).toMatch(/holds \d+ entries logged after it/);
          expect((await privately(g, FLAGGED, policy)).code, `private, policy ${policy}`).toBe('BUILD_SUPERSEDED');
        }
        // Kept for the next test: what a client reads from the store just before it is put right.
        rolledBack.absence = (await g.request(`/v1/absence?domain=${UNAUDITED}`)).json;
        const prefix = (await privately(g, UNAUDITED)).prefix!;
        rolledBack.prefix = { prefix, answer: (await g.request(`/v1/lookup/${prefix}`)).json };
        const exit = exitCodeOf('BUILD_SUPERSEDED');
        for (const args of [[FLAGGED], [FLAGGED, '--private'], [FLAGGED, '--policy', w.policyFile]]) {
          const run = await cli(g, args);
          expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(exit);
          expect(JSON.parse(run.stdout)).toMatchObject({ valid: false, code: 'BUILD_SUPERSEDED' });
        }
      });
    } finally {
      await pointCurrentAt(dec);
    }
  });

  it('an online client that read a superseded answer looks once more, and gets the current one', async () => {
    await withGateway(async (g) => {
      const real = gatewaySource({ baseUrl: g.url, apiKey: g.key });
      let absences = 0;
      let prefixes = 0;
      const source = {
        ...real,
        absence: async (d: string) => (++absences === 1 ? rolledBack.absence : real.absence(d)),
        prefix: async (x: string) => (++prefixes === 1 ? rolledBack.prefix!.answer : real.prefix!(x)),
      };
      const v = await verifyOnline({ domain: UNAUDITED, source, vkey, log: true });
      expect({ code: v.code, absences }).toEqual({ code: 'NEVER_AUDITED', absences: 2 });
      const pv = await verifyOnlinePrivately({ domain: UNAUDITED, source, vkey, log: true });
      expect({ code: pv.code, prefixes, prefix: pv.prefix }).toEqual({
        code: 'NEVER_AUDITED',
        prefixes: 2,
        prefix: rolledBack.prefix!.prefix,
      });
      // Twice superseded is the verdict: one more look, never a loop.
      const stuck = { ...real, absence: async () => rolledBack.absence };
      expect((await verifyOnline({ domain: UNAUDITED, source: stuck, vkey, log: true })).code).toBe('BUILD_SUPERSEDED');
    });
  });

  it('an answer about the named kept build is not refused (asOfBuild, mvr verify --build), another build is', async () => {
    // November is kept; its served checkpoint is still December's, which holds entries after November's statement.
    await withGateway(async (g) => {
      expect((await online(g, FLAGGED, { build: nov })).code).toBe('NEVER_AUDITED');
      const kept = await cli(g, [FLAGGED, '--build', nov]);
      expect(kept.code, kept.stderr).toBe(exitCodeOf('NEVER_AUDITED'));
      // The same kept answer, not asked as that build: it is not the newest build's.
      const proof = (await g.request(`/v1/absence?domain=${FLAGGED}&build=${nov}`)).json;
      const source = { keySet: gatewaySource({ baseUrl: g.url }).keySet };
      const asLive = await verifyOnline({ domain: FLAGGED, absence: proof, source, vkey, log: true });
      expect(asLive.code).toBe('BUILD_SUPERSEDED');
      const asOther = await verifyOnline({ domain: FLAGGED, absence: proof, source, vkey, log: true, asOfBuild: dec });
      expect(asOther.code).toBe('BUILD_SUPERSEDED');
    });
    await rm(join(buildDir(nov), BUILD_SERVED_CHECKPOINT_FILE));
  });

  it('rolled back with its own old checkpoint: accepted under --max-age while its cosignatures are fresh, refused once older', async () => {
    await pointCurrentAt(nov);
    try {
      await withGateway(async (g) => {
        const maxAgeMs = 36 * HOUR;
        // No entry after the statement in its own checkpoint: only its age can tell.
        expect((await online(g, FLAGGED, { policy: true, maxAgeMs, now: novCosignedAt + 35 * HOUR })).code).toBe('NEVER_AUDITED');
        const stale = await online(g, FLAGGED, { policy: true, maxAgeMs, now: novCosignedAt + 37 * HOUR });
        expect(stale.code).toBe('NOT_WITNESSED');
        // A checkpoint the caller saved from the live log (December's) refuses it at any age, without a policy.
        const saved = join(w.p.root, 'trusted-checkpoint');
        await writeFile(saved, await readFile(join(buildDir(dec), BUILD_CHECKPOINT_FILE)));
        const trustedCheckpoint = await readFile(saved, 'utf8');
        expect(
          (await verifyOnline({ domain: FLAGGED, source: gatewaySource({ baseUrl: g.url, apiKey: g.key }), vkey, trustedCheckpoint })).code,
        ).toBe('BUILD_SUPERSEDED');
        for (const args of [[FLAGGED], [FLAGGED, '--private']]) {
          const run = await cli(g, [...args, '--checkpoint', saved]);
          expect(run.code, run.stderr).toBe(exitCodeOf('BUILD_SUPERSEDED'));
          expect(JSON.parse(run.stdout).message).toMatch(/fewer than the \d+ of the checkpoint you trust/);
        }
      });
    } finally {
      await pointCurrentAt(dec);
    }
  });

  it('a trusted checkpoint: the live answer against it holds; one of its size under another root is LOG_INCONSISTENT', async () => {
    const trustedCheckpoint = await readFile(join(buildDir(dec), BUILD_CHECKPOINT_FILE), 'utf8');
    const { origin, size } = parseCheckpoint(parseNote(trustedCheckpoint).text);
    const forked = signNote(w.logKey, formatCheckpoint({ origin, size, root: new Uint8Array(32).fill(7) }));
    await withGateway(async (g) => {
      const source = gatewaySource({ baseUrl: g.url, apiKey: g.key });
      expect((await verifyOnline({ domain: UNAUDITED, source, vkey, trustedCheckpoint })).code).toBe('NEVER_AUDITED');
      expect((await verifyOnlinePrivately({ domain: UNAUDITED, source, vkey, trustedCheckpoint })).code).toBe('NEVER_AUDITED');
      expect((await verifyOnline({ domain: GOLD_DOMAIN, source, vkey, trustedCheckpoint })).code).toBe(null);
      expect((await verifyOnline({ domain: UNAUDITED, source, vkey, trustedCheckpoint: forked })).code).toBe('LOG_INCONSISTENT');
      expect((await verifyOnline({ domain: GOLD_DOMAIN, source, vkey, trustedCheckpoint: forked })).code).toBe('LOG_INCONSISTENT');
    });
  });

  it('a build short of its quorum appends the live statement again: answers stay current, before and after the refresh', async () => {
    const before = checkpointSize(await readFile(join(buildDir(dec), BUILD_CHECKPOINT_FILE), 'utf8'));
    await writeFile(join(w.p.auditsDir, 'more.jsonl'), jsonl(audit('one-more-shop.example')));
    await w.policyWith(['b', 'c']);
    const short = await w.build('2026-12-02T00:00:00Z');
    expect(short.code, short.stdout + short.stderr).toBe(exitCodeOf('WITNESS_QUORUM_NOT_MET'));
    expect(await liveId()).toBe(dec);
    // The head: the short build's entries, then December's statement once more.
    const head = checkpointSize(await readFile(join(logDir(w.p), 'checkpoint'), 'utf8'));
    expect(head).toBeGreaterThan(before + 1);
    const now = w.witnesses[0]!.now.ms;
    await withGateway(async (g) => {
      expect(await statementPlace(g, UNAUDITED)).toEqual({ index: before - 1, size: before });
      expect((await online(g, UNAUDITED, { policy: true, now })).code).toBe('NEVER_AUDITED');
      expect((await privately(g, UNAUDITED, true)).code).toBe('NEVER_AUDITED');
    });
    // The refresh has the head cosigned by all three and serves it for December: its last entry is December's statement.
    await w.policyWith([]);
    const refresh = await runCli(['log', 'witness', '--policy', w.policyFile, '--records', w.p.recordsDir, '--public', w.p.publicDir]);
    expect(refresh.code, refresh.stderr).toBe(0);
    await withGateway(async (g) => {
      expect(await statementPlace(g, UNAUDITED)).toEqual({ index: head - 1, size: head });
      for (const policy of [false, true]) expect((await online(g, UNAUDITED, { policy, now })).code).toBe('NEVER_AUDITED');
      const run = await cli(g, [UNAUDITED, '--private', '--policy', w.policyFile]);
      expect(JSON.parse(run.stdout).code).toBe('NEVER_AUDITED');
    });
    // The log stays an append-only extension of what was published before, the repeated entry included.
    const check = await runCli([
      'log',
      'check',
      '--log',
      logDir(w.p),
      '--log-key',
      vkeyFile(w.p),
      '--checkpoint',
      join(buildDir(dec), BUILD_CHECKPOINT_FILE),
    ]);
    expect(check.code, check.stderr).toBe(0);
  });
});
