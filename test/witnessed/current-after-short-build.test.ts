/**
 * Newest means last when a build fails to go live (decision 0077), with three real witnesses: a build
 * short of its quorum appends the live build's statement again, so answers stay current before and
 * after the refresh has the newer head cosigned, and `mvr log check` still proves the log only grew.
 * A checkpoint the caller saved holds the live answers, and one of its size under another root is
 * LOG_INCONSISTENT.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gatewaySource, verifyOnline, verifyOnlineCompact } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCheckpoint, parseCheckpoint, parseNote } from '#shared';
import { exitCodeOf } from '../../core/errors/registry.ts';
import { BUILD_CHECKPOINT_FILE } from '../../core/layout.ts';
import { signNote } from '../../keyring/log-key.ts';
import { audit, jsonl } from '../support/audits.ts';
import { runCli } from '../support/cli.ts';
import { type TwoWitnessedMonths, twoWitnessedMonths } from '../support/current-project.ts';
import { cleanup } from '../support/gateway.ts';
import { logDir, vkeyFile } from '../support/logged-project.ts';
import { GOLD, removeTempDirs, UNAUDITED } from '../support/project.ts';
import { checkpointSize } from '../support/witnessed-project.ts';

let t: TwoWitnessedMonths;
let w: TwoWitnessedMonths['w'];
let vkey: string;
let dec: string;

beforeAll(async () => {
  t = await twoWitnessedMonths();
  ({ w, vkey, dec } = t);
});
afterAll(async () => {
  await cleanup();
  await w.close();
  await removeTempDirs();
});

describe.sequential('a build that does not go live leaves answers current', () => {
  it('a trusted checkpoint: the live answer against it holds; one of its size under another root is LOG_INCONSISTENT', async () => {
    const trustedCheckpoint = await readFile(join(t.buildDir(dec), BUILD_CHECKPOINT_FILE), 'utf8');
    const { origin, size } = parseCheckpoint(parseNote(trustedCheckpoint).text);
    const forked = signNote(w.logKey, formatCheckpoint({ origin, size, root: new Uint8Array(32).fill(7) }));
    await t.withGateway(async (g) => {
      const source = gatewaySource({ baseUrl: g.url, apiKey: g.key });
      expect((await verifyOnline({ domain: UNAUDITED, source, vkey, trustedCheckpoint })).code).toBe('NEVER_AUDITED');
      expect((await verifyOnlineCompact({ domain: UNAUDITED, source, vkey, trustedCheckpoint })).code).toBe('NEVER_AUDITED');
      expect((await verifyOnline({ domain: GOLD, source, vkey, trustedCheckpoint })).code).toBe(null);
      expect((await verifyOnline({ domain: UNAUDITED, source, vkey, trustedCheckpoint: forked })).code).toBe('LOG_INCONSISTENT');
      expect((await verifyOnline({ domain: GOLD, source, vkey, trustedCheckpoint: forked })).code).toBe('LOG_INCONSISTENT');
    });
  });

  it('a build short of its quorum appends the live statement again: answers stay current, before and after the refresh', async () => {
    const before = checkpointSize(await readFile(join(t.buildDir(dec), BUILD_CHECKPOINT_FILE), 'utf8'));
    await writeFile(join(w.p.auditsDir, 'more.jsonl'), jsonl(audit('one-more-shop.example')));
    await w.policyWith(['b', 'c']);
    const short = await w.build('2026-12-02T00:00:00Z');
    expect(short.code, short.stdout + short.stderr).toBe(exitCodeOf('WITNESS_QUORUM_NOT_MET'));
    expect(await t.liveId()).toBe(dec);
    // The head: the short build's entries, then December's statement once more.
    const head = checkpointSize(await readFile(join(logDir(w.p), 'checkpoint'), 'utf8'));
    expect(head).toBeGreaterThan(before + 1);
    const now = w.witnesses[0]!.now.ms;
    await t.withGateway(async (g) => {
      expect(await t.statementPlace(g, UNAUDITED)).toEqual({ index: before - 1, size: before });
      expect((await t.online(g, UNAUDITED, { policy: true, now })).code).toBe('NEVER_AUDITED');
      expect((await t.privately(g, UNAUDITED, true)).code).toBe('NEVER_AUDITED');
    });
    // The refresh has the head cosigned by all three and serves it for December: its last entry is December's statement.
    await w.policyWith([]);
    const refresh = await runCli(['log', 'witness', '--policy', w.policyFile, '--records', w.p.recordsDir, '--public', w.p.publicDir]);
    expect(refresh.code, refresh.stderr).toBe(0);
    await t.withGateway(async (g) => {
      expect(await t.statementPlace(g, UNAUDITED)).toEqual({ index: head - 1, size: head });
      for (const policy of [false, true]) expect((await t.online(g, UNAUDITED, { policy, now })).code).toBe('NEVER_AUDITED');
      const run = await t.cli(g, [UNAUDITED, '--private', '--policy', w.policyFile]);
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
      join(t.buildDir(dec), BUILD_CHECKPOINT_FILE),
    ]);
    expect(check.code, check.stderr).toBe(0);
  });
});
