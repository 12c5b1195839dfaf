/**
 * Two monthly builds with three real witnesses, for the tests of "newest means last" (decision
 * 0077): November's, then December's, which also audits a merchant November never had and flags one
 * November verified. Helpers point the store's `current` at a build, start a gateway over the store
 * as it is, and verify through the package's online clients and `mvr verify`, all on the witnesses'
 * injected clock.
 */
import { readFile, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { gatewaySource, parsePolicy, verifyOnline, verifyOnlineCompact } from '@merchant-verify/verifier';
import { parseCheckpoint, parseNote, parseTlogProof } from '#shared';
import { BUILDS_DIR, CURRENT_LINK } from '../../core/layout.ts';
import { audit, jsonl } from './audits.ts';
import { runCli } from './cli.ts';
import type { TestGateway } from './gateway.ts';
import { gatewayOver, vkeyFile } from './logged-project.ts';
import { type WitnessedProject, witnessedProject } from './witnessed-project.ts';

export const HOUR = 3_600_000;

/**
 * The verifier's settings a store rolled back with proofs against the newest checkpoint is refused
 * under: without a policy, with one, and with one and a maximum age its fresh checkpoint meets (only
 * the build is old).
 */
export const ROLLED_BACK_SETTINGS = [
  [false, undefined],
  [true, undefined],
  [true, 36 * HOUR],
] as const;
/** Audited in December only: November's build has no record of it. */
export const FLAGGED = 'flagged-this-month.example';
/** Verified in November's build, flagged in December's: its November record is validly signed, and not current. */
export const TURNED = 'verified-then-flagged.example';

/** What `online` verifies with besides the log key: the policy, a maximum age, a clock, a kept build asked for. */
export interface OnlineOptions {
  policy?: boolean;
  maxAgeMs?: number;
  now?: number;
  build?: string;
}

export interface TwoWitnessedMonths {
  w: WitnessedProject;
  policyText: string;
  vkey: string;
  /** November's build and December's (live). */
  nov: string;
  dec: string;
  /** When the witnesses cosigned November's checkpoint (their injected clock); December's an hour later. */
  novCosignedAt: number;
  liveId(): Promise<string>;
  buildDir(id: string): string;
  /** Points `current` at `id`, as an operator (or an attacker with the store) would: one rename. */
  pointCurrentAt(id: string): Promise<void>;
  /** Runs `run` with a gateway started over the store as it is now (one a state: no waiting on its refresh). */
  withGateway<T>(run: (g: TestGateway) => Promise<T>): Promise<T>;
  /** The package's online verification of `domain`'s answer, with the log key (the clock: the witnesses'). */
  online(g: TestGateway, domain: string, o?: OnlineOptions): ReturnType<typeof verifyOnline>;
  /** The same through a compact private lookup (a maximum age only with the policy). */
  privately(g: TestGateway, domain: string, policy?: boolean, maxAgeMs?: number): ReturnType<typeof verifyOnlineCompact>;
  /** `mvr verify ARGS --log --json` against the gateway. */
  cli(g: TestGateway, args: string[]): ReturnType<typeof runCli>;
  /** The statement proof's index and its checkpoint's size, of `domain`'s absence proof as the gateway serves it. */
  statementPlace(g: TestGateway, domain: string): Promise<{ index: number; size: number }>;
}

export async function twoWitnessedMonths(): Promise<TwoWitnessedMonths> {
  const w = await witnessedProject();
  const policyText = await w.policyWith();
  const novCosignedAt = w.witnesses[0]!.now.ms;
  const liveId = async () => basename(await realpath(join(w.p.recordsDir, CURRENT_LINK)));
  await writeFile(join(w.p.auditsDir, 'turned.jsonl'), jsonl(audit(TURNED, { score: 88 })));
  const first = await w.build('2026-11-01T00:00:00Z');
  if (first.code !== 0) throw new Error(first.stdout + first.stderr);
  const vkey = (await readFile(vkeyFile(w.p), 'utf8')).trim();
  const nov = await liveId();
  await writeFile(join(w.p.auditsDir, 'flagged.jsonl'), jsonl(audit(FLAGGED, { score: 12 })));
  await writeFile(
    join(w.p.auditsDir, 'turned.jsonl'),
    jsonl(audit(TURNED, { score: 11, flagged: true, last_audited_at: '2026-11-20T00:00:00Z' })),
  );
  w.setClock(novCosignedAt + HOUR);
  const second = await w.build('2026-12-01T00:00:00Z');
  if (second.code !== 0) throw new Error(second.stdout + second.stderr);
  const dec = await liveId();
  const now = () => w.witnesses[0]!.now.ms;
  return {
    w,
    policyText,
    vkey,
    nov,
    dec,
    novCosignedAt,
    liveId,
    buildDir: (id) => join(w.p.recordsDir, BUILDS_DIR, id),
    async pointCurrentAt(id) {
      const tmp = join(w.p.recordsDir, `${CURRENT_LINK}.tmp-test`);
      await rm(tmp, { force: true });
      await symlink(join(BUILDS_DIR, id), tmp, 'dir');
      await rename(tmp, join(w.p.recordsDir, CURRENT_LINK));
    },
    async withGateway(run) {
      const g = await gatewayOver(w.p);
      try {
        return await run(g);
      } finally {
        await g.close();
      }
    },
    online: (g, domain, o = {}) =>
      verifyOnline({
        domain,
        source: gatewaySource({ baseUrl: g.url, apiKey: g.key, ...(o.build ? { build: o.build } : {}) }),
        vkey,
        log: true,
        ...(o.policy ? { policy: parsePolicy(policyText) } : {}),
        ...(o.maxAgeMs ? { maxAgeMs: o.maxAgeMs } : {}),
        now: o.now ?? now(),
        ...(o.build ? { asOfBuild: o.build } : {}),
      }),
    privately: (g, domain, policy = false, maxAgeMs) =>
      verifyOnlineCompact({
        domain,
        source: gatewaySource({ baseUrl: g.url, apiKey: g.key }),
        vkey,
        log: true,
        ...(policy ? { policy: parsePolicy(policyText) } : {}),
        ...(maxAgeMs ? { maxAgeMs } : {}),
        now: now(),
      }),
    cli: (g, args) => runCli(['verify', ...args, '--log', '--log-key', vkeyFile(w.p), '--base-url', g.url, '--api-key', g.key, '--json']),
    async statementPlace(g, domain) {
      const proof = parseTlogProof((await g.request(`/v1/absence?domain=${domain}`)).json.statement_proof);
      return { index: proof.index, size: parseCheckpoint(parseNote(proof.checkpoint).text).size };
    },
  };
}
