/**
 * `mvr witness` keeps its word: one process owns a state folder (a second, in another process,
 * refuses to start; a lock left by a dead process is taken over), a replayed checkpoint is
 * cosigned afresh without a write, a log is found by the origin it was configured with (not by
 * its key's name), and a port it cannot have is INVALID_CONFIG, its default not the gateway's.
 */
import { spawnSync } from 'node:child_process';
import { stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OPTIONS } from '../../cli/options.ts';
import { formatAddCheckpoint } from '../../witness/protocol.ts';
import { originHash, STATE_LOCK_FILE, WitnessState } from '../../witness/server/state.ts';
import { runCli } from '../support/cli.ts';
import { removeTempDirs, tempDir } from '../support/project.ts';
import { spawnWitnessCli, startTestWitness, testLog } from '../support/witness.ts';

afterAll(() => removeTempDirs());

const add = (url: string, oldSize: number, checkpoint: string, proof: Uint8Array[] = []) =>
  fetch(`${url}/add-checkpoint`, { method: 'POST', body: formatAddCheckpoint({ oldSize, proof, checkpoint }) });

describe('one state folder, one witness', () => {
  it('a second WitnessState on the folder is INVALID_CONFIG while the first is open, and opens once it is closed', async () => {
    const dir = await tempDir();
    const first = await new WitnessState(dir).open();
    await expect(new WitnessState(dir).open()).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/in use by process/),
    });
    await first.close();
    await (await new WitnessState(dir).open()).close();
  });

  it('a second `mvr witness` process on the same state exits 2 and cosigns nothing; a lock left by a dead process is taken over', async () => {
    const log = testLog();
    const dir = await tempDir();
    const vkeys = join(dir, 'logs.vkey');
    await writeFile(vkeys, `${log.key.vkey}\n`);
    const keys = join(dir, 'keys');
    expect((await runCli(['keygen', '--witness', '--keys', keys, '--issuer', 'partner.example'])).code).toBe(0);
    const owner = await startTestWitness('owner', [log], join(dir, 'state'));
    try {
      const second = await runCli(['witness', '--log-vkey', vkeys, '--keys', keys, '--state', join(dir, 'state'), '--port', '0']);
      expect(second.code).toBe(2);
      expect(second.stderr).toMatch(/INVALID_CONFIG.*in use by process/);
    } finally {
      await owner.close();
    }
    // A crashed owner: its pid names no process any more.
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(join(dir, 'state', STATE_LOCK_FILE), `${dead}\n`);
    const next = await new WitnessState(join(dir, 'state')).open();
    await next.close();
  });
});

describe('a replayed checkpoint', () => {
  it('is cosigned with a fresh timestamp, and the state file is not written again', async () => {
    const log = testLog();
    const w = await startTestWitness('replay', [log]);
    try {
      expect((await add(w.url, 0, log.checkpoint(9))).status).toBe(200);
      const file = join(w.state.dir, `${originHash('log.test/log')}.json`);
      const before = await stat(file);
      w.now.ms += 3_600_000;
      for (let i = 0; i < 3; i++) {
        const res = await add(w.url, 9, log.checkpoint(9));
        expect(res.status).toBe(200);
        expect(await res.text()).toMatch(/^\u2014 replay\.test\/witness /u);
      }
      const after = await stat(file);
      expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
      // A larger checkpoint is still stored (a new file, renamed into place).
      expect((await add(w.url, 9, log.checkpoint(12), await log.proof(9, 12))).status).toBe(200);
      expect((await stat(file)).ino).not.toBe(before.ino);
    } finally {
      await w.close();
    }
  });
});

describe('mvr witness configuration', () => {
  it('finds a log by the origin its line names, not by its key name (a sum.golang.org-like log)', async () => {
    const log = testLog('go.sum database tree', 40, 'sum.log.test');
    const dir = await tempDir();
    const keys = join(dir, 'keys');
    expect((await runCli(['keygen', '--witness', '--keys', keys, '--issuer', 'partner.example'])).code).toBe(0);
    for (const [line, status] of [
      [`${log.key.vkey} go.sum database tree`, 200],
      [log.key.vkey, 404],
    ] as const) {
      const vkeys = join(dir, 'logs.vkey');
      await writeFile(vkeys, `# a log whose key name is not its origin\n${line}\n`);
      const witness = await spawnWitnessCli(['--log-vkey', vkeys, '--keys', keys, '--state', join(dir, `state-${status}`), '--port', '0']);
      try {
        expect((await add(witness.url, 0, log.checkpoint(5))).status).toBe(status);
      } finally {
        expect((await witness.stop()).code).toBe(0);
      }
    }
  });

  it('a port in use or out of range is INVALID_CONFIG (exit 2); its default is not the gateway port', async () => {
    const log = testLog();
    const dir = await tempDir();
    await writeFile(join(dir, 'logs.vkey'), `${log.key.vkey}\n`);
    expect((await runCli(['keygen', '--witness', '--keys', dir, '--issuer', 'partner.example'])).code).toBe(0);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as AddressInfo).port);
    try {
      const base = ['witness', '--log-vkey', join(dir, 'logs.vkey'), '--keys', dir, '--state', join(dir, 'state'), '--host', '127.0.0.1'];
      for (const p of [port, '70000']) {
        const run = await runCli([...base, '--port', p]);
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(/INVALID_CONFIG/);
        expect(run.stderr).not.toMatch(/\n\s+at /);
      }
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    expect(OPTIONS.witnessPort.fallback).not.toBe(OPTIONS.port.fallback);
  });
});
