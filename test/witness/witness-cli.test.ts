/**
 * `mvr keygen --witness` and `mvr witness`, the real CLI (dist/bin): the key made like the log
 * key (0600, its verifier key printed, never replaced), and a witness process that cosigns.
 */
import { mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePolicy, verifyWitnessedCheckpoint } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { formatAddCheckpoint } from '../../witness/protocol.ts';
import { runCli } from '../support/cli.ts';
import { policyText, spawnWitnessCli, testLog } from '../support/witness.ts';

describe('mvr keygen --witness and mvr witness', () => {
  it('makes a 0600 key, prints its vkey, refuses to replace it; the witness process cosigns with it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'witness-cli-'));
    const keys = join(dir, 'keys');
    const made = await runCli(['keygen', '--witness', '--keys', keys, '--issuer', 'partner.example']);
    expect(made.code).toBe(0);
    const vkey = made.stdout.trim();
    expect(vkey).toMatch(/^partner\.example\/witness\+[0-9a-f]{8}\+B[A-Za-z0-9+/]{43}$/);
    expect((await stat(join(keys, 'witness.key'))).mode & 0o777).toBe(0o600);
    const again = await runCli(['keygen', '--witness', '--keys', keys, '--issuer', 'partner.example']);
    expect(again.code).toBe(2);

    const log = testLog();
    const vkeyFile = join(dir, 'log.vkey');
    await writeFile(vkeyFile, `# the log we witness\n${log.key.vkey}\n`);
    const witness = await spawnWitnessCli([
      '--log-vkey',
      vkeyFile,
      '--keys',
      keys,
      '--state',
      join(dir, 'state'),
      '--port',
      '0',
      '--host',
      '127.0.0.1',
    ]);
    const url = witness.url;
    try {
      const res = await fetch(`${url}/add-checkpoint`, {
        method: 'POST',
        body: formatAddCheckpoint({ oldSize: 0, proof: [], checkpoint: log.checkpoint(7) }),
      });
      expect(res.status).toBe(200);
      const policy = parsePolicy(policyText(log, [{ name: 'partner', vkey, url }], 'quorum partner'));
      expect(verifyWitnessedCheckpoint(log.checkpoint(7) + (await res.text()), policy, { now: Date.now() })).toMatchObject({
        valid: true,
        cosigners: [{ witness: 'partner' }],
      });
    } finally {
      expect((await witness.stop()).code).toBe(0);
    }
  });

  it('refuses to start without --log-vkey, or without a witness key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'witness-cli-'));
    const noVkey = await runCli(['witness', '--keys', dir, '--port', '0']);
    expect(noVkey.code).toBe(2);
    expect(noVkey.stderr).toMatch(/--log-vkey/);
    const vkeyFile = join(dir, 'log.vkey');
    await writeFile(vkeyFile, `${testLog().key.vkey}\n`);
    const noKey = await runCli(['witness', '--log-vkey', vkeyFile, '--keys', dir, '--port', '0']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/keygen --witness/);
  });
});
