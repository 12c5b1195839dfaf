/**
 * What a new user meets in the first hour, through the real CLI against a logged build and the
 * real gateway: `verify --log` of a never-audited domain, `log check` given a file that is not a
 * checkpoint, `verify --keys` given a folder, `apikey revoke` given the whole key, and a negative
 * number for every numeric flag. Each refusal names what is wrong, with the registry's exit code.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILD_OPTIONS } from '../../cli/commands/build.ts';
import { PUBLISH_OPTIONS } from '../../cli/commands/publish.ts';
import { SERVE_OPTIONS } from '../../cli/commands/serve.ts';
import { WITNESS_OPTIONS } from '../../cli/commands/witness.ts';
import { OPTIONS, type OptionName } from '../../cli/config.ts';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { gatewayOver, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { build, liveRecordFile, makeProject, ROOT, removeTempDirs } from '../support/project.ts';
import { poll } from '../support/wait.ts';

afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

const p = await loggedProject();
// With the per-record tree: a record file to hand to verify --file.
await build(p, { now: NOV, tree: true });
const g = await gatewayOver(p);
const gateway = ['--base-url', g.url, '--api-key', g.key];

describe.concurrent('the first hour', () => {
  it('verify --log of a never-audited domain: its absence proof decides, exit 15 (not 12)', async () => {
    const r = await runCli(['verify', 'never-audited.example', ...gateway, '--log', '--json']);
    expect(r.code, r.stderr).toBe(exitCodeOf('NEVER_AUDITED'));
    expect(JSON.parse(r.stdout)).toMatchObject({
      valid: false,
      code: 'NEVER_AUDITED',
      domain: 'never-audited.example',
      absence: { valid: true },
      claims: { status: 'unverified' },
    });
    const record = await runCli(['verify', 'acme-outdoor.example', ...gateway, '--log']);
    expect(record.code, record.stderr).toBe(0);
  });

  it('verify --log of a record of a build made without a log key: NOT_IN_LOG (13), saying no proof is kept, not a malformed one', async () => {
    const unlogged = await startTestGateway(await makeProject());
    const r = await runCli(['verify', 'acme-outdoor.example', '--base-url', unlogged.url, '--api-key', unlogged.key, '--log', '--json']);
    expect(r.code, r.stderr).toBe(exitCodeOf('NOT_IN_LOG'));
    const out = JSON.parse(r.stdout) as { code: string; log: { code: string; message: string } };
    expect([out.code, out.log.code]).toEqual(['NOT_IN_LOG', 'NOT_IN_LOG']);
    expect(out.log.message).toContain('keeps no log proof');
  });

  it('verify --log-key without --log runs the log check it names, never leaves it out in silence', async () => {
    const r = await runCli(['verify', 'acme-outdoor.example', ...gateway, '--log-key', vkeyFile(p), '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: true, log: { valid: true }, trust: { log_key: 'pinned' } });
    // A saved record with its key set and the log key, but no proof to check: the check asked for cannot run.
    const saved = await runCli([
      'verify',
      '--file',
      liveRecordFile(p, 'acme-outdoor.example'),
      '--key-set',
      p.publicDir,
      '--log-key',
      vkeyFile(p),
    ]);
    expect(saved.code).toBe(2);
    expect(saved.stderr).toMatch(/--log needs --proof FILE/);
    const help = await runCli(['verify', '--help']);
    const logKeyHelp = help.stdout.split('\n  --log-key LOG_KEY')[1]!.split('\n  --')[0]!.replace(/\s+/g, ' ');
    expect(logKeyHelp).toMatch(/^ the log's verifier key.*; implies --log$/);
  });

  it('log check --checkpoint of a file that is not a checkpoint: invalid input (exit 3) naming the file', async () => {
    const readme = join(ROOT, 'README.md');
    const r = await runCli(['log', 'check', '--checkpoint', readme, '--public', p.publicDir]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/INVALID_CHECKPOINT: --checkpoint .*README\.md is not a checkpoint/);
    expect(exitCodeOf('LOG_INCONSISTENT')).not.toBe(3);
  });

  it('verify --key-set takes the public folder (its key set); a folder without one is named with the flag', async () => {
    const record = liveRecordFile(p, 'acme-outdoor.example');
    const folder = await runCli(['verify', '--file', record, '--key-set', p.publicDir]);
    expect(folder.code, folder.stderr).toBe(0);
    const keysFolder = await runCli(['verify', '--file', record, '--key-set', p.keysDir]);
    expect(keysFolder.code).toBe(2);
    expect(keysFolder.stderr).toContain(`--key-set ${p.keysDir} is a folder without .well-known/merchant-verify-keys.json`);
    expect(keysFolder.stderr).not.toMatch(/EISDIR/);
  });

  it("verify's --keys is an alias of --key-set: it still works, messages name it as typed, and both at once is a usage error", async () => {
    const record = liveRecordFile(p, 'acme-outdoor.example');
    expect((await runCli(['verify', '--file', record, '--keys', p.publicDir])).code).toBe(0);
    const keysFolder = await runCli(['verify', '--file', record, '--keys', p.keysDir, '--json']);
    expect(JSON.parse(keysFolder.stdout)).toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/^--keys /) });
    const both = await runCli(['verify', '--file', record, '--keys', p.publicDir, '--key-set', p.publicDir, '--json']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/INVALID_USAGE: verify: --keys is an alias of --key-set/);
    const help = await runCli(['verify', '--help']);
    expect(help.stdout).toMatch(/--keys KEYS\s+alias of --key-set/);
  });

  it('apikey revoke takes the whole key, and no error of apikey prints a secret', async () => {
    const where = ['--api-keys', p.apiKeysFile];
    const created = await runCli(['apikey', 'create', '--label', 'to revoke', ...where]);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim();
    g.secrets.add(key);
    const secret = key.slice(16);
    await poll(
      () => g.verify('acme-outdoor.example', { key }),
      (r) => r.status === 200,
    );
    const mistakes = await Promise.all([
      runCli(['apikey', 'revoke', `${key}x`, ...where]),
      runCli(['apikey', 'revoke', key.slice(0, -1), ...where]),
      runCli(['apikey', 'revoke', 'some-id', key, ...where]),
      runCli(['apikey', 'create', '--label', 'x', key, ...where]),
      runCli(['apikey', 'revoke', `${key}x`, '--json', ...where]),
      // A bad Redis URL with a password in it: the value is not repeated either.
      runCli(['apikey', 'list', '--redis', `redis://:${secret}@redis.example:99999`]),
    ]);
    for (const r of mistakes) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout + r.stderr).not.toContain(secret);
    }
    const revoked = await runCli(['apikey', 'revoke', key, ...where]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout + revoked.stderr).not.toContain(secret);
    expect(revoked.stderr).toMatch(/^revoked API key [a-z0-9]{10} \(to revoke\)/);
    await poll(
      () => g.verify('acme-outdoor.example', { key }),
      (r) => r.status === 401,
      { timeoutMs: 2000 },
    );
    expect(await readFile(p.apiKeysFile, 'utf8')).not.toContain(secret);
  });

  // Every numeric flag: taken from the options table, so a new one is checked too.
  const numeric = (Object.keys(OPTIONS) as OptionName[]).filter(
    (name) => OPTIONS[name].flag !== null && typeof OPTIONS[name].schema.safeParse('5').data === 'number',
  );
  it.each(numeric.map((name) => ({ name, flag: OPTIONS[name].flag })))(
    '--$flag -5: refused by the option schema, naming the flag (exit 2)',
    async ({ name }) => {
      expect(numeric.length).toBeGreaterThanOrEqual(7);
      const o = OPTIONS[name];
      const command = (SERVE_OPTIONS as readonly string[]).includes(name)
        ? 'serve'
        : (BUILD_OPTIONS as readonly string[]).includes(name)
          ? 'build'
          : (WITNESS_OPTIONS as readonly string[]).includes(name)
            ? 'witness'
            : (PUBLISH_OPTIONS as readonly string[]).includes(name)
              ? 'publish'
              : null;
      expect(command, name).not.toBeNull();
      const where = command === 'witness' ? [] : ['--records', join(p.root, 'nothing-here')];
      const r = await runCli([command!, `--${o.flag}`, '-5', ...where]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`INVALID_CONFIG: --${o.flag} / ${o.env} "-5": must be`);
      expect(r.stderr).not.toMatch(/ambiguous/);
    },
  );
});
