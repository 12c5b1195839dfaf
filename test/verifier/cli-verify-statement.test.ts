/**
 * `mvr verify DOMAIN --log` of a never-audited domain, and `verifyAnswer` given the log's key: the
 * absence proof's build statement must be in the log (its statement_proof), reported on the
 * absence line and in the JSON; a statement the key's log does not hold is exit 13, never 15.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyAnswer } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLogKeyText, parseLogKey } from '../../keyring/log-key.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { gatewayOver, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { build, GOLD, ISSUER, type Project, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';

let p: Project, g: TestGateway, vkey: string, keySet: unknown, absence: Record<string, unknown>, dir: string;
beforeAll(async () => {
  p = await loggedProject();
  await build(p, { now: NOV });
  g = await gatewayOver(p);
  vkey = (await readFile(vkeyFile(p), 'utf8')).trim();
  keySet = JSON.parse(await readFile(p.keySetFile, 'utf8'));
  absence = (await g.request(`/v1/absence?domain=${UNAUDITED}`)).json;
  dir = await tempDir();
});
afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

const save = async (name: string, text: string) => {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
};
const json = (stdout: string) => JSON.parse(stdout) as { absence: Record<string, unknown> };

describe('mvr verify --log of a never-audited domain', () => {
  it('through the gateway: exit 15, the statement in the log named on the absence line and in the JSON', async () => {
    const online = ['verify', UNAUDITED, '--base-url', g.url, '--api-key', g.key, '--log'];
    const j = await runCli([...online, '--json']);
    expect(j.code, j.stderr).toBe(15);
    expect(json(j.stdout).absence).toMatchObject({
      valid: true,
      log: { valid: true, index: 33, tree_size: 34, origin: `${ISSUER}/log` },
    });
    const text = await runCli(online);
    expect(text.code).toBe(15);
    expect(text.stdout).toMatch(
      /absence {4}never audited in build \S+ .*; statement in the log: entry 33 of 34 in merchant-verify\.example\/log/,
    );
    // Without --log nothing changes: the map and the signed statement decide, and the log is not named.
    const plain = await runCli(['verify', UNAUDITED, '--base-url', g.url, '--api-key', g.key, '--json']);
    expect(plain.code).toBe(15);
    expect(json(plain.stdout).absence).toMatchObject({ valid: true, log: null });
  });

  it("another log's key: exit 13 STATEMENT_NOT_LOGGED, never 15", async () => {
    const other = await save('other.vkey', `${parseLogKey(generateLogKeyText(`${ISSUER}/log`), 'other').vkey}\n`);
    const r = await runCli(['verify', UNAUDITED, '--base-url', g.url, '--api-key', g.key, '--log', '--log-key', other, '--json']);
    expect(r.code).toBe(13);
    expect(json(r.stdout).absence).toMatchObject({ valid: false, code: 'STATEMENT_NOT_LOGGED' });
  });

  it('offline with a saved proof: exit 15; the same proof without its statement_proof is exit 13', async () => {
    const keys = await save('keys.json', JSON.stringify(keySet));
    const offline = (file: string) =>
      runCli(['verify', UNAUDITED, '--absence', file, '--key-set', keys, '--log', '--log-key', vkeyFile(p)]);
    const good = await offline(await save('absence.json', JSON.stringify(absence)));
    expect(good.code, good.stderr).toBe(15);
    const { statement_proof: _, ...without } = absence;
    const bad = await offline(await save('old-absence.json', JSON.stringify(without)));
    expect(bad.code).toBe(13);
    expect(bad.stdout).toMatch(/absence {4}NOT PROVEN: STATEMENT_NOT_LOGGED/);
  });
});

describe('verifyAnswer with the log key', () => {
  it("checks a never-audited answer's statement in the log, and asks a record for its log proof", async () => {
    const v = verifyAnswer({ domain: UNAUDITED, keySet, absence: { proof: absence }, log: { vkey } });
    expect(v).toMatchObject({ code: 'NEVER_AUDITED', absence: { valid: true, statementLog: { index: 33 } }, log: null });
    const { statement_proof: _, ...without } = absence;
    expect(verifyAnswer({ domain: UNAUDITED, keySet, absence: { proof: without }, log: { vkey } }).code).toBe('STATEMENT_NOT_LOGGED');
    expect(verifyAnswer({ domain: UNAUDITED, keySet, absence: { proof: without } }).code).toBe('NEVER_AUDITED');
    const record = (await g.verify(GOLD)).json;
    expect(verifyAnswer({ answer: record, keySet, log: { vkey } })).toMatchObject({ code: 'MALFORMED_PROOF', log: { valid: false } });
    const proof = (await g.request(`/v1/proof?domain=${GOLD}`)).text;
    expect(verifyAnswer({ answer: record, keySet, log: { vkey, proof } }).code).toBeNull();
  });
});
