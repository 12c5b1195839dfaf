/**
 * `mvr verify --policy` from the outside: a real logged build whose checkpoint real witnesses
 * cosigned (their clocks set two hours back), served by a real gateway; the real CLI checks a
 * record's log proof online and offline, and an absence proof with a statement proof (the
 * vectors'), under the policy, another policy, and maximum ages the cosignatures meet or exceed.
 */
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gatewaySource, parsePolicy, verifyOnlineCompact } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { type BuildWitness, buildPolicy, cosignBuild, startBuildWitnesses } from '../support/cosign-build.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { camelCaseInOutput } from '../support/json-members.ts';
import { gatewayOver, logDir, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { build, GOLD, type Project, removeTempDirs, tempDir } from '../support/project.ts';

const TWO_HOURS = 2 * 3_600_000;
let p: Project;
let g: TestGateway;
let witnesses: BuildWitness[];
let dir: string;
let cosignedAt: number;
const file = (name: string) => join(dir, name);

beforeAll(async () => {
  p = await loggedProject();
  await build(p, { now: NOV });
  cosignedAt = Math.floor((Date.now() - TWO_HOURS) / 1000) * 1000;
  witnesses = await startBuildWitnesses(p, ['pay', 'shop', 'glass'], cosignedAt);
  const policy = await buildPolicy(p, witnesses, 'group two 2 pay shop glass\nquorum two');
  dir = await tempDir();
  await writeFile(file('older-checkpoint'), await readFile(join(logDir(p), 'checkpoint')));
  await cosignBuild(p, policy);
  // The same log, witnesses of other keys (that never saw it).
  const others = await startBuildWitnesses(p, ['pay', 'shop', 'glass'], cosignedAt);
  await writeFile(file('witnesses.policy'), policy);
  await writeFile(file('other.policy'), await buildPolicy(p, others, 'group two 2 pay shop glass\nquorum two'));
  for (const w of others) await w.close();
  g = await gatewayOver(p);
  await writeFile(file('record.json'), (await g.verify(GOLD)).text);
  await writeFile(file('proof'), (await g.request(`/v1/proof?domain=${GOLD}`)).text);
});
afterAll(async () => {
  for (const w of witnesses) await w.close();
  await cleanup();
  await removeTempDirs();
});

const offline = (...more: string[]) =>
  runCli(['verify', '--file', file('record.json'), '--key-set', p.keySetFile, '--proof', file('proof'), '--log-key', vkeyFile(p), ...more]);

describe('mvr verify --policy, a record', () => {
  it('offline: the proof the gateway served carries the cosignatures; --policy implies --log', async () => {
    const r = await offline('--policy', file('witnesses.policy'), '--json');
    expect(camelCaseInOutput(r)).toEqual([]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.log).toMatchObject({ valid: true });
    expect(out.witnesses.witnessed_at).toBe(new Date(cosignedAt).toISOString());
    expect(out.witnesses.cosigners.map((c: { witness: string }) => c.witness).sort()).toEqual(['glass', 'pay', 'shop']);
    const text = await offline('--policy', file('witnesses.policy'), '--max-age', '3h');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/witnesses {2}last at .*cosigned by /);
  });

  it("a valid record with another record's log proof: the verdict is the log's (valid false, NOT_INCLUDED, exit 13), its signature step valid", async () => {
    const other = file('other-proof');
    await writeFile(other, (await g.request('/v1/proof?domain=bluebird-books.example')).text);
    const r = await runCli([
      'verify',
      '--file',
      file('record.json'),
      '--key-set',
      p.keySetFile,
      '--proof',
      other,
      '--log-key',
      vkeyFile(p),
      '--log',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(13);
    expect(JSON.parse(r.stdout)).toMatchObject({
      valid: false,
      code: 'NOT_INCLUDED',
      signature: { valid: true },
      log: { valid: false, code: 'NOT_INCLUDED' },
    });
  });

  it('online: the same through the gateway', async () => {
    const r = await runCli(['verify', GOLD, '--base-url', g.url, '--api-key', g.key, '--policy', file('witnesses.policy'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).witnesses.witnessed_at).toBe(new Date(cosignedAt).toISOString());
  });

  it('fails with a policy naming other witness keys, or a maximum age the cosignatures exceed: NOT_WITNESSED, exit 17', async () => {
    for (const more of [
      ['--policy', file('other.policy')],
      ['--policy', file('witnesses.policy'), '--max-age', '90m'],
    ]) {
      const r = await offline(...more, '--json');
      expect(r.code, more.join(' ')).toBe(17);
      expect(JSON.parse(r.stdout)).toMatchObject({
        valid: false,
        code: 'NOT_WITNESSED',
        log: { valid: false, code: 'NOT_WITNESSED' },
        witnesses: { valid: false, code: 'NOT_WITNESSED' },
      });
    }
    const text = await offline('--policy', file('other.policy'));
    expect(text.stdout).toMatch(/NOT PROVEN: NOT_WITNESSED/);
  });

  it('a --max-age that is no duration, or --max-age without --policy, is a usage error naming the flag: exit 2', async () => {
    for (const more of [
      ['--policy', file('witnesses.policy'), '--max-age', '36x'],
      ['--max-age', '36h'],
    ]) {
      const r = await offline(...more, '--json');
      expect(r.code, more.join(' ')).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: 'INVALID_USAGE', message: expect.stringContaining('--max-age') });
    }
  });

  it('a policy file that cannot be used is INVALID_POLICY naming its line: exit 2', async () => {
    await writeFile(file('bad.policy'), 'witness a nonsense\nquorum a\n');
    const r = await offline('--policy', file('bad.policy'), '--json');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ code: 'INVALID_POLICY', message: expect.stringContaining('bad.policy:1') });
  });

  it('a policy file saved with CRLF line ends is INVALID_POLICY saying CRLF at its first line', async () => {
    await writeFile(file('crlf.policy'), 'quorum none\r\n');
    const r = await offline('--policy', file('crlf.policy'), '--json');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({
      code: 'INVALID_POLICY',
      message: expect.stringMatching(/--policy \S*crlf\.policy:1: .*CRLF/),
    });
  });
});

describe('mvr verify --private --policy: the build statement is the logged, witnessed entry', () => {
  const online = (policy: string, ...more: string[]) =>
    runCli(['verify', GOLD, '--private', '--base-url', g.url, '--api-key', g.key, '--policy', file(policy), ...more]);

  it('an entry: valid only with the log and witness steps run and held, witnessed_at and the cosigners kept, in JSON and text', async () => {
    const r = await online('witnesses.policy', '--json');
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      valid: true,
      code: null,
      private: true,
      signature: null,
      entry: { valid: true, record_fetched: false },
      statement: { valid: true },
      log: { valid: true, code: null, index: expect.any(Number), tree_size: expect.any(Number), origin: expect.any(String) },
      witnesses: { valid: true, code: null, witnessed_at: new Date(cosignedAt).toISOString() },
      // The log key is the policy's log line; the key set came from the gateway checked.
      trust: { key_set: 'first_use', key_set_source: `${g.url}/.well-known/merchant-verify-keys.json`, log_key: 'policy' },
    });
    expect(out.witnesses.cosigners.map((c: { witness: string }) => c.witness).sort()).toEqual(['glass', 'pay', 'shop']);
    const text = await online('witnesses.policy');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/log {8}build statement included: entry \d+ of \d+ in /);
    expect(text.stdout).toMatch(/witnesses {2}last at .*cosigned by /);
    expect(text.stdout).toContain(
      `key set    taken from ${g.url}/.well-known/merchant-verify-keys.json (first use; pin it with --trusted-keys FILE)`,
    );
    expect(text.stdout).not.toMatch(/log key {4}taken from|see the proof above/);
  });

  it('a policy of other witness keys: NOT_WITNESSED (exit 17) in the verdict, the log step and the witnesses step alike', async () => {
    const r = await online('other.policy', '--json');
    expect(r.code).toBe(17);
    expect(JSON.parse(r.stdout)).toMatchObject({
      valid: false,
      code: 'NOT_WITNESSED',
      signature: null,
      statement: { valid: false, code: 'NOT_WITNESSED' },
      log: { valid: false, code: 'NOT_WITNESSED' },
      witnesses: { valid: false, code: 'NOT_WITNESSED' },
    });
    const text = (await online('other.policy')).stdout;
    expect(text).toMatch(/^INVALID \(NOT_WITNESSED\): [\s\S]*\n {2}witnesses {2}NOT PROVEN: NOT_WITNESSED \(/);
    expect(text).not.toContain('see the proof above');
  });

  it("with --max-age: within the cosignatures' age valid, past it NOT_WITNESSED (exit 17), for an entry and an absence, privately and plainly", async () => {
    for (const domain of [GOLD, 'never-audited-max-age.example'])
      for (const privately of [true, false]) {
        const args = ['verify', domain, ...(privately ? ['--private'] : []), '--base-url', g.url, '--api-key', g.key];
        const witnessed = [...args, '--policy', file('witnesses.policy'), '--json'];
        const within = await runCli([...witnessed, '--max-age', '3h']);
        expect(within.code, `${domain} private ${privately}: ${within.stdout}`).toBe(domain === GOLD ? 0 : 15);
        const past = await runCli([...witnessed, '--max-age', '90m']);
        expect(past.code, `${domain} private ${privately}`).toBe(17);
        expect(JSON.parse(past.stdout)).toMatchObject({ valid: false, code: 'NOT_WITNESSED' });
      }
  });

  it('the package: verifyOnlineCompact says the same, and where its keys came from', async () => {
    const policy = parsePolicy(await readFile(file('witnesses.policy'), 'utf8'));
    const v = await verifyOnlineCompact({ domain: GOLD, source: gatewaySource({ baseUrl: g.url, apiKey: g.key }), policy });
    expect(v.code).toBeNull();
    expect(v).toMatchObject({ entry: { domain: GOLD }, statement: { valid: true }, witnessed: { witnessedAt: cosignedAt } });
    expect(v.trust).toEqual({ keySet: 'source', logKey: 'policy' });
    const other = parsePolicy(await readFile(file('other.policy'), 'utf8'));
    const refused = await verifyOnlineCompact({ domain: GOLD, source: gatewaySource({ baseUrl: g.url, apiKey: g.key }), policy: other });
    expect(refused).toMatchObject({ code: 'NOT_WITNESSED', entry: null });
  });
});

describe('mvr log check --policy', () => {
  const check = (...more: string[]) =>
    runCli(['log', 'check', '--public', p.publicDir, '--checkpoint', file('older-checkpoint'), ...more, '--json']);

  it('the live checkpoint is consistent and cosigned by the quorum: when last witnessed', async () => {
    const r = await check('--policy', file('witnesses.policy'), '--max-age', '1d');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ consistent: true, witnessed: { witnessed_at: new Date(cosignedAt).toISOString() } });
  });

  it('fails with a policy naming other witness keys, or a maximum age the cosignatures exceed: exit 17', async () => {
    for (const more of [
      ['--policy', file('other.policy')],
      ['--policy', file('witnesses.policy'), '--max-age', '1h'],
    ]) {
      const r = await check(...more);
      expect(r.code, more.join(' ')).toBe(17);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: 'NOT_WITNESSED' });
    }
  });
});

describe('mvr verify --policy, an absence proof with its statement proof (the vectors)', () => {
  // Cosigned by w1 and w2 (last at 2026-11-18T10:36:40Z) and x3: older than any clock this test runs at.
  const vectors = JSON.parse(readFileSync(join(import.meta.dirname, '../vectors/witness/witnessed-proofs.json'), 'utf8')) as {
    policies: Record<string, string>;
    absence: { key_set: unknown; domain: string; proof: unknown };
  };
  const absence = async (policy: string, ...more: string[]) => {
    await writeFile(file(`${policy}.policy`), vectors.policies[policy]!);
    await writeFile(file('absence.json'), JSON.stringify(vectors.absence.proof));
    await writeFile(file('vector-keys.json'), JSON.stringify(vectors.absence.key_set));
    const args = ['--absence', file('absence.json'), '--key-set', file('vector-keys.json'), '--policy', file(`${policy}.policy`)];
    return runCli(['verify', vectors.absence.domain, ...args, ...more, '--json']);
  };

  it('verifies offline with the policy: never audited (exit 15), and when last witnessed', async () => {
    const r = await absence('two of three');
    expect(r.code, r.stderr).toBe(15);
    expect(JSON.parse(r.stdout)).toMatchObject({
      code: 'NEVER_AUDITED',
      absence: { valid: true },
      witnesses: { valid: true, witnessed_at: '2026-11-18T10:36:40.000Z' },
    });
  });

  it('fails with a policy naming other witness keys, or a maximum age the cosignatures exceed', async () => {
    for (const [policy, more] of [
      ['other witnesses', []],
      ['two of three', ['--max-age', '1d']],
    ] as const) {
      const r = await absence(policy, ...more);
      expect(r.code, policy).toBe(17);
      expect(JSON.parse(r.stdout)).toMatchObject({
        code: 'NOT_WITNESSED',
        absence: { valid: false, code: 'NOT_WITNESSED' },
        witnesses: { valid: false, code: 'NOT_WITNESSED' },
      });
    }
  });
});
