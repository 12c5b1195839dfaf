/**
 * Newest means last (decision 0077), with three real witnesses and real builds: a store pointed back
 * at last month's build, its proofs made against the newest checkpoint, answers "never audited" for a
 * merchant audited this month; the package, `mvr verify --log` and `mvr verify --private --log`
 * refuse it as BUILD_SUPERSEDED, with or without a policy, and an online client that read it looks
 * once more. Rolled back with its own old checkpoint, it holds under a maximum age only while that
 * checkpoint's cosignatures are fresh, and never against a newer checkpoint the caller saved. An
 * answer about a named kept build is not refused.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ageOf, gatewaySource, verifyOnline, verifyOnlineCompact } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../core/errors/registry.ts';
import { BUILD_CHECKPOINT_FILE, BUILD_SERVED_CHECKPOINT_FILE } from '../../core/layout.ts';
import { FLAGGED, HOUR, ROLLED_BACK_SETTINGS, type TwoWitnessedMonths, twoWitnessedMonths } from '../support/current-project.ts';
import { cleanup } from '../support/gateway.ts';
import { removeTempDirs, UNAUDITED } from '../support/project.ts';

let t: TwoWitnessedMonths;
let w: TwoWitnessedMonths['w'];
let vkey: string;
let nov: string;
let dec: string;
let novCosignedAt: number;

beforeAll(async () => {
  t = await twoWitnessedMonths();
  ({ w, vkey, nov, dec, novCosignedAt } = t);
});
afterAll(async () => {
  await cleanup();
  await w.close();
  await removeTempDirs();
});
/** What the rolled-back store served: an absence proof, and the lookup statement with its compact answer (and bucket), all superseded. */
const rolledBack: { absence?: unknown; compact?: { bucket: string; head: unknown; answer: Uint8Array } } = {};

describe.sequential('an answer is current when its statement is the last entry of its checkpoint', () => {
  it("the live build's answers hold, with and without a policy; the flagged merchant has a record", async () => {
    await t.withGateway(async (g) => {
      const now = w.witnesses[0]!.now.ms;
      const plain = await t.online(g, UNAUDITED);
      expect(plain.code).toBe('NEVER_AUDITED');
      // Without a policy, the build's age only; with one, the newest cosignature's too.
      expect(ageOf(plain, Date.parse('2026-12-03T00:00:00Z'))).toEqual({
        issuedAt: '2026-12-01T00:00:00.000Z',
        buildAgeSeconds: 2 * 86_400,
        newestCosignatureAt: null,
        newestCosignatureAgeSeconds: null,
      });
      const witnessed = await t.online(g, UNAUDITED, { policy: true });
      expect(witnessed.code).toBe('NEVER_AUDITED');
      expect(ageOf(witnessed, now + HOUR)).toMatchObject({ newestCosignatureAt: now, newestCosignatureAgeSeconds: 3600 });
      expect((await t.privately(g, UNAUDITED, true)).code).toBe('NEVER_AUDITED');
      expect((await g.verify(FLAGGED)).json.status).not.toBe('unverified');
    });
  });

  it('a store rolled back to last month, its proofs against the newest checkpoint: BUILD_SUPERSEDED everywhere', async () => {
    // The newest checkpoint (December's, cosigned) holds November's statement too: the log only grows.
    await writeFile(join(t.buildDir(nov), BUILD_SERVED_CHECKPOINT_FILE), await readFile(join(t.buildDir(dec), BUILD_CHECKPOINT_FILE)));
    await t.pointCurrentAt(nov);
    try {
      await t.withGateway(async (g) => {
        expect((await g.verify(FLAGGED)).json.status).toBe('unverified');
        const place = await t.statementPlace(g, FLAGGED);
        expect(place.index).toBeLessThan(place.size - 1);
        for (const [policy, maxAgeMs] of ROLLED_BACK_SETTINGS) {
          const v = await t.online(g, FLAGGED, { policy, maxAgeMs });
          expect(v.code, `policy ${policy}, max age ${maxAgeMs}`).toBe('BUILD_SUPERSEDED');
          expect(v.absence).toMatchObject({ valid: false, code: 'BUILD_SUPERSEDED' });
          if (!v.absence!.valid) expect(v.absence!.message).toMatch(/holds \d+ entries logged after it/);
          const pv = await t.privately(g, FLAGGED, policy, maxAgeMs);
          expect(pv.code, `private, policy ${policy}, max age ${maxAgeMs}`).toBe('BUILD_SUPERSEDED');
        }
        // Kept for the next test: what a client reads from the store just before it is put right.
        rolledBack.absence = (await g.request(`/v1/absence?domain=${UNAUDITED}`)).json;
        const bucket = (await t.privately(g, UNAUDITED)).bucket!;
        const answer = await g.request(`/v1/lookup/${bucket}`);
        expect(answer.status).toBe(200);
        rolledBack.compact = { bucket, head: (await g.request('/v1/lookup')).json, answer: answer.bytes };
        const exit = exitCodeOf('BUILD_SUPERSEDED');
        for (const args of [[FLAGGED], [FLAGGED, '--private'], [FLAGGED, '--policy', w.policyFile]]) {
          const run = await t.cli(g, args);
          expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(exit);
          expect(JSON.parse(run.stdout)).toMatchObject({ valid: false, code: 'BUILD_SUPERSEDED' });
        }
      });
    } finally {
      await t.pointCurrentAt(dec);
    }
  });

  it('an online client that read a superseded answer looks once more, and gets the current one', async () => {
    await t.withGateway(async (g) => {
      const real = gatewaySource({ baseUrl: g.url, apiKey: g.key });
      let absences = 0;
      let heads = 0;
      let buckets = 0;
      const source = {
        ...real,
        absence: async (d: string) => (++absences === 1 ? rolledBack.absence : real.absence(d)),
        lookupStatement: async () => (++heads === 1 ? rolledBack.compact!.head : real.lookupStatement!()),
        compact: async (bits: number, hex: string) => (++buckets === 1 ? rolledBack.compact!.answer : real.compact!(bits, hex)),
      };
      const v = await verifyOnline({ domain: UNAUDITED, source, vkey, log: true });
      expect({ code: v.code, absences }).toEqual({ code: 'NEVER_AUDITED', absences: 2 });
      const pv = await verifyOnlineCompact({ domain: UNAUDITED, source, vkey, log: true });
      expect({ code: pv.code, heads, buckets, bucket: pv.bucket }).toEqual({
        code: 'NEVER_AUDITED',
        heads: 2,
        buckets: 2,
        bucket: rolledBack.compact!.bucket,
      });
      // The statement read before a build went live, the bucket after (without the log, so the statement itself
      // passes): the answer is the newer build's (another root, and another size when the bucket size changed),
      // so the client looks once more from the statement read again.
      let crossedHeads = 0;
      const crossed = { ...real, lookupStatement: async () => (++crossedHeads === 1 ? rolledBack.compact!.head : real.lookupStatement!()) };
      const cv = await verifyOnlineCompact({ domain: UNAUDITED, source: crossed });
      expect({ code: cv.code, heads: crossedHeads }).toEqual({ code: 'NEVER_AUDITED', heads: 2 });
      // Twice superseded is the verdict: one more look, never a loop.
      const stuck = { ...real, absence: async () => rolledBack.absence };
      expect((await verifyOnline({ domain: UNAUDITED, source: stuck, vkey, log: true })).code).toBe('BUILD_SUPERSEDED');
    });
  });

  it('an answer about the named kept build is not refused (asOfBuild, mvr verify --build), another build is', async () => {
    // November is kept; its served checkpoint is still December's, which holds entries after November's statement.
    await t.withGateway(async (g) => {
      expect((await t.online(g, FLAGGED, { build: nov })).code).toBe('NEVER_AUDITED');
      const kept = await t.cli(g, [FLAGGED, '--build', nov]);
      expect(kept.code, kept.stderr).toBe(exitCodeOf('NEVER_AUDITED'));
      // The same kept answer, not asked as that build: it is not the newest build's.
      const proof = (await g.request(`/v1/absence?domain=${FLAGGED}&build=${nov}`)).json;
      const source = { keySet: gatewaySource({ baseUrl: g.url }).keySet };
      const asLive = await verifyOnline({ domain: FLAGGED, absence: proof, source, vkey, log: true });
      expect(asLive.code).toBe('BUILD_SUPERSEDED');
      const asOther = await verifyOnline({ domain: FLAGGED, absence: proof, source, vkey, log: true, asOfBuild: dec });
      expect(asOther.code).toBe('BUILD_SUPERSEDED');
    });
    await rm(join(t.buildDir(nov), BUILD_SERVED_CHECKPOINT_FILE));
  });

  it('rolled back with its own old checkpoint: accepted under --max-age while its cosignatures are fresh, refused once older', async () => {
    await t.pointCurrentAt(nov);
    try {
      await t.withGateway(async (g) => {
        const maxAgeMs = 36 * HOUR;
        // No entry after the statement in its own checkpoint: only its age can tell.
        expect((await t.online(g, FLAGGED, { policy: true, maxAgeMs, now: novCosignedAt + 35 * HOUR })).code).toBe('NEVER_AUDITED');
        const stale = await t.online(g, FLAGGED, { policy: true, maxAgeMs, now: novCosignedAt + 37 * HOUR });
        expect(stale.code).toBe('NOT_WITNESSED');
        // A checkpoint the caller saved from the live log (December's) refuses it at any age, without a policy.
        const saved = join(w.p.root, 'trusted-checkpoint');
        await writeFile(saved, await readFile(join(t.buildDir(dec), BUILD_CHECKPOINT_FILE)));
        const trustedCheckpoint = await readFile(saved, 'utf8');
        expect(
          (await verifyOnline({ domain: FLAGGED, source: gatewaySource({ baseUrl: g.url, apiKey: g.key }), vkey, trustedCheckpoint })).code,
        ).toBe('BUILD_SUPERSEDED');
        for (const args of [[FLAGGED], [FLAGGED, '--private']]) {
          const run = await t.cli(g, [...args, '--checkpoint', saved]);
          expect(run.code, run.stderr).toBe(exitCodeOf('BUILD_SUPERSEDED'));
          expect(JSON.parse(run.stdout).message).toMatch(/fewer than the \d+ of the checkpoint you trust/);
        }
      });
    } finally {
      await t.pointCurrentAt(dec);
    }
  });
});
