/**
 * Ctrl-C (SIGINT) or SIGTERM during `mvr build`: the real CLI, signalled as soon as it says it is
 * signing records (read from its stderr, never a timer; its staging folder exists), exits 130 with INTERRUPTED, ends
 * the progress line, names the build that stays live, and leaves records/ and public/ exactly as
 * they were: no staging folder, no lock. A failed build leaves no empty folder behind either.
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogKey, logOrigin } from '../../keyring/log-key.ts';
import { audit, jsonl } from '../support/audits.ts';
import { buildArgs, runCli, spawnCli } from '../support/cli.ts';
import { snapshot, snapshotOutputs } from '../support/outputs.ts';
import { ISSUER, makeProject, type Project, removeTempDirs } from '../support/project.ts';

/** Enough audits that a build is still signing records well after it says it began. */
const AUDITS = 4000;

let project: Project;
let liveBuild: string;
beforeAll(async () => {
  project = await makeProject();
  const many = Array.from({ length: AUDITS }, (_, i) => audit(`shop-${i}.interrupt.example`));
  await writeFile(join(project.auditsDir, 'many.jsonl'), jsonl(...many));
  liveBuild = (await snapshot(project.recordsDir)).current!.replace(/^link:builds\//, '');
}, 30_000);
afterAll(removeTempDirs);

/** Runs `mvr build` and sends `signal` once it announces the records phase; resolves with its exit and output. */
async function buildInterrupted(signal: NodeJS.Signals, json: boolean) {
  const writing = json ? /"phase":"records"/ : /build: signing records/;
  let sent = false;
  const r = await spawnCli(
    buildArgs(project, json ? ['--json'] : []),
    { MVR_PROGRESS_MS: '5' },
    {
      onSpawn: (child) => {
        let stderr = '';
        child.stderr?.on('data', (s: string) => {
          stderr += s;
          if (!sent && writing.test(stderr)) {
            sent = true;
            child.kill(signal);
          }
        });
      },
    },
  );
  return { ...r, sent };
}

describe('mvr build interrupted', () => {
  it('SIGINT mid-build: exit 130, the line ended, INTERRUPTED naming the live build; records and public as they were', async () => {
    const before = await snapshotOutputs(project);
    const r = await buildInterrupted('SIGINT', false);
    expect(r.sent, r.stderr).toBe(true);
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toMatch(/\n$/);
    const last = r.stderr.trimEnd().split('\n').at(-1);
    expect(last).toBe(
      `mvr: INTERRUPTED: the build was interrupted (SIGINT) before it went live: nothing was published and its staging folder is removed; build ${liveBuild} stays live`,
    );
    expect(r.stdout).toBe('');
    // Nothing added, removed or rewritten: no staging folder, no lock, the same live build.
    expect(await snapshotOutputs(project)).toEqual(before);
  });

  it('SIGTERM with --json: exit 130 and the error as JSON on stdout; again nothing changed', async () => {
    const before = await snapshotOutputs(project);
    const r = await buildInterrupted('SIGTERM', true);
    expect(r.sent, r.stderr).toBe(true);
    expect(r.code, r.stderr).toBe(130);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: false,
      code: 'INTERRUPTED',
      message: expect.stringContaining(`(SIGTERM) before it went live`),
    });
    expect(await snapshotOutputs(project)).toEqual(before);
  });
});

describe('a failed build leaves no empty folder', () => {
  it('a first build with bad audits does not leave an empty records folder', async () => {
    const p = await makeProject({ build: false, files: { 'bad.jsonl': jsonl(audit('bad.example', { score: 'high' })) } });
    const r = await runCli(buildArgs(p));
    expect(r.code, r.stderr).toBe(3);
    expect(await stat(p.recordsDir).catch(() => null)).toBeNull();
  });

  it('a build that fails at its swap, after writing log tiles, leaves no folder of them', async () => {
    const p = await makeProject({ build: false });
    await createLogKey(p.keysDir, logOrigin(ISSUER));
    await mkdir(join(p.recordsDir, 'current'), { recursive: true }); // a folder where the link goes: the swap fails
    const r = await runCli(buildArgs(p));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/BUILD_FAILED: cannot replace .*current/);
    expect(await snapshot(p.recordsDir)).toEqual({ current: 'dir' });
    expect(Object.keys(await snapshot(p.publicDir)).filter((path) => path.startsWith('log'))).toEqual([]);
  });
});
