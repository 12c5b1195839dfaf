/**
 * Newest means last, under load: clients keep verifying never-audited answers (their absence proofs,
 * with the log key), records with the log (each tied to its build by its bundle) and compact private answers
 * (a record's and an absence's) through the package's online clients while new builds are swapped in. Every build's statement ends the checkpoint its proofs are
 * against, and a client that meets a build going live looks once more: 0 wrong answers, 0 refusals.
 * Bounded in count, never in time (decision 0058).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gatewaySource, verifyOnline, verifyOnlineCompact } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, jsonl } from '../support/audits.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { gatewayOver, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { build, GOLD, type Project, removeTempDirs } from '../support/project.ts';
import { poll } from '../support/wait.ts';

const BUILDS = 3;
const CLIENTS = 2;
/** The most rounds a client asks (four answers a round), whatever happens. */
const MAX_ROUNDS = 400;
/** Answers each swap must see once the new build is served. */
const ANSWERS_AFTER_SWAP = 30;
/** Builds on a machine shared with other work. */
const LONG = 120_000;

let p: Project;
let g: TestGateway;
let vkey: string;
beforeAll(async () => {
  p = await loggedProject();
  await build(p, { now: NOV });
  g = await gatewayOver(p);
  vkey = (await readFile(vkeyFile(p), 'utf8')).trim();
});
afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

describe('answers stay current while builds go live', () => {
  it(
    'absences, records with the log and compact private answers verified through each swap: 0 wrong answers, 0 spurious refusals',
    async () => {
      const failures: string[] = [];
      let answers = 0;
      let stopped = false;
      const source = gatewaySource({ baseUrl: g.url, apiKey: g.key });
      const check = (what: string, code: string | null, wanted: string | null) => {
        answers++;
        if (code !== wanted) failures.push(`${what}: ${code}, not ${wanted}`);
      };
      const client = async (c: number) => {
        for (let n = 0; n < MAX_ROUNDS && !stopped; n++) {
          const unaudited = `never-current-${c}-${n}.example`;
          const [absent, record, privateAbsent, privateRecord] = await Promise.all([
            verifyOnline({ domain: unaudited, source, vkey, log: true }),
            verifyOnline({ domain: GOLD, source, vkey, log: true }),
            verifyOnlineCompact({ domain: unaudited, source, vkey, log: true }),
            verifyOnlineCompact({ domain: GOLD, source, vkey, log: true }),
          ]);
          check(`${unaudited} absence`, absent.code, 'NEVER_AUDITED');
          // A record of the live build, its bundle's statement the last entry: never an older build's record.
          check(`${GOLD} record`, record.code, null);
          if (record.code === null && !('statement' in record && record.statement?.valid))
            failures.push(`${GOLD} record: no bundle checked`);
          check(`${unaudited} compact answer`, privateAbsent.code, 'NEVER_AUDITED');
          check(`${GOLD} compact answer`, privateRecord.code, null);
        }
      };
      const running = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      try {
        for (let b = 1; b <= BUILDS; b++) {
          const added = `new-shop-${b}.example`;
          await writeFile(join(p.auditsDir, `new-${b}.jsonl`), jsonl(audit(added)));
          await build(p, { now: NOV + b * 60_000 });
          // Under load until the new build is served, then a few more answers.
          await poll(
            () => g.verify(added),
            (r) => r.status === 200 && r.json?.status !== 'unverified',
            { timeoutMs: 30_000 },
          );
          const seen = answers;
          await poll(
            async () => answers,
            (n) => n >= seen + ANSWERS_AFTER_SWAP,
            { timeoutMs: 30_000 },
          );
        }
      } finally {
        stopped = true;
        await running;
      }
      expect(failures, failures.join('\n')).toEqual([]);
      expect(answers).toBeGreaterThan(BUILDS * ANSWERS_AFTER_SWAP);
    },
    LONG,
  );
});
