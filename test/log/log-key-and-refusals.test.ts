/**
 * The log key (0600, named after the issuer, never replaced), a build that refuses a log that is
 * not what its checkpoint says and publishes nothing, and a build without a log key.
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCheckpoint, parseNote } from '#shared';
import type { BuildSummary } from '../../builder/build.ts';
import { createLogKey, generateLogKeyText, LOG_KEY_FILE, loadLogKey, parseLogKey, signNote } from '../../keyring/log-key.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import type { TestGateway } from '../support/gateway.ts';
import { cleanup } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { DEC, gatewayOver, logDir, loggedProject, NOV } from '../support/logged-project.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { snapshot } from '../support/outputs.ts';
import {
  auditsFolder,
  build,
  buildFails,
  copyProject,
  ISSUER,
  makeProject,
  type Project,
  removeTempDirs,
  tempDir,
} from '../support/project.ts';

// One logged build of November, made once; each test that starts from it builds on a copy.
let novBuilt: Project;
beforeAll(async () => {
  novBuilt = await loggedProject();
  await build(novBuilt, { now: NOV });
});
afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

describe.concurrent('the log key', () => {
  it('is created 0600, named <issuer>/log, never replaced, and read from MVR_LOG_KEY as well', async () => {
    const dir = await tempDir();
    const key = await createLogKey(dir, 'verify.example/log');
    expect((await stat(join(dir, LOG_KEY_FILE))).mode & 0o777).toBe(0o600);
    expect(key.vkey).toMatch(/^verify\.example\/log\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    await expect(createLogKey(dir, 'verify.example/log')).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    const text = (await readFile(join(dir, LOG_KEY_FILE), 'utf8')).trim();
    expect((await loadLogKey(dir, undefined))!.vkey).toBe(key.vkey);
    const other = generateLogKeyText('verify.example/log');
    expect((await loadLogKey(dir, other))!.vkey).toBe(parseLogKey(other, 'x').vkey);
    expect(() => parseLogKey(text.replace(/\+[0-9a-f]{8}\+/, '+00000000+'), 'MVR_LOG_KEY')).toThrow(/key ID 00000000 does not match/);
    expect(() => parseLogKey('{"kty":"OKP"}', 'MVR_LOG_KEY')).toThrow(/MVR_LOG_KEY is not a log key/);
  });
});

describe.concurrent('a build refuses a log that is not what its checkpoint says, and publishes nothing', () => {
  const builtOnce = () => copyProject(novBuilt);
  async function refused(p: Project, message: RegExp): Promise<void> {
    const before = { records: await snapshot(p.recordsDir), log: await snapshot(logDir(p)) };
    const error = await buildFails(p, { now: DEC });
    expect(error.code).toBe('LOG_INCONSISTENT');
    expect(error.message).toMatch(message);
    expect(await snapshot(p.recordsDir)).toEqual(before.records);
    expect(await snapshot(logDir(p))).toEqual(before.log);
  }

  it('a rewritten entry in a published tile', async () => {
    const p = await builtOnce();
    const file = join(logDir(p), 'tile/0/000.p/34');
    const bytes = await readFile(file);
    bytes[40]! ^= 1;
    await writeFile(file, bytes);
    await refused(p, /do not match its checkpoint/);
  });

  it('an entry bundle that does not hash to its tile', async () => {
    const p = await builtOnce();
    const file = join(logDir(p), 'tile/entries/000.p/34');
    const bytes = await readFile(file);
    bytes[5]! ^= 1;
    await writeFile(file, bytes);
    await refused(p, /does not hash to the level-0 tile/);
  });

  it('a checkpoint signed by another key', async () => {
    const p = await builtOnce();
    const note = await readFile(join(logDir(p), 'checkpoint'), 'utf8');
    const impostor = parseLogKey(generateLogKeyText(`${ISSUER}/log`), 'impostor');
    await writeFile(join(logDir(p), 'checkpoint'), signNote(impostor, parseNote(note).text));
    await refused(p, /not a checkpoint signed by this log key/);
  });

  it('tiles without a checkpoint', async () => {
    const p = await builtOnce();
    await rm(join(logDir(p), 'checkpoint'));
    await refused(p, /has tiles but no checkpoint/);
  });

  it('before it reads a single audit (broken audits are not what it reports)', async () => {
    const p = await builtOnce();
    await rm(join(logDir(p), 'checkpoint'));
    const broken = await auditsFolder({ 'broken.jsonl': '{"domain": \n' }, false);
    const error = await buildFails({ ...p, auditsDir: broken }, { now: DEC });
    expect(error.code).toBe('LOG_INCONSISTENT');
    // The same broken audits under a log in order: the audits are what is refused.
    expect((await buildFails({ ...(await builtOnce()), auditsDir: broken }, { now: DEC })).code).toBe('INVALID_AUDITS');
  });

  it('a log key made for another issuer is a configuration error', async () => {
    const p = await makeProject({ sign: true, build: false });
    await createLogKey(p.keysDir, 'elsewhere.example/log');
    expect((await buildFails(p, { now: NOV })).code).toBe('INVALID_CONFIG');
  });
});

describe.concurrent('without a log key', () => {
  let p: Project;
  let summary: BuildSummary;
  let g: TestGateway;
  const warnings: string[] = [];
  beforeAll(async () => {
    p = await copyProject(novBuilt);
    await rm(join(p.keysDir, LOG_KEY_FILE));
    summary = await build(p, { now: DEC, onWarning: (m) => warnings.push(m) });
    g = await gatewayOver(p);
  });

  it('builds, says the records are not in the log, leaves the log alone, and the gateway answers NOT_IN_LOG', async () => {
    expect(summary.log).toBeNull();
    expect(warnings.join('\n')).toMatch(/NOT appended to the log/);
    expect(parseCheckpoint(parseNote(await readFile(join(logDir(p), 'checkpoint'), 'utf8')).text).size).toBe(34);
    expectProblem(await g.request('/v1/proof?domain=acme-outdoor.example'), 404, 'NOT_IN_LOG');
  });

  it("MCP verify_merchant with include_proof: the record's verification fails at the log step (NOT_IN_LOG), never valid", async () => {
    const client = await connectHttpClient(g.url, g.key);
    try {
      const result = await client.callTool({ name: 'verify_merchant', arguments: { domain: 'acme-outdoor.example', include_proof: true } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({
        valid: false,
        code: 'NOT_IN_LOG',
        signature: { valid: true },
        log: { valid: false, code: 'NOT_IN_LOG' },
      });
    } finally {
      await client.close();
    }
  });

  it('the CLI build says so in its summary', async () => {
    const q = await makeProject({ sign: true, build: false });
    const r = await runCli(buildArgs(q));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/log: {7}not appended \(no log key\)/);
    expect(r.stderr).toMatch(/no log key configured/);
  });
});
