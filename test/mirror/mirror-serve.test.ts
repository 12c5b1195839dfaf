/**
 * A mirror answers offline with no other flag: `mvr serve --records DIR`, started in a folder of
 * its own (no public folder, no key set beside it), serves the mirror's key set, its log files,
 * verifiable absence proofs and private lookups, with the keys the mirror pinned.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bucketHex, bucketOf, verifyAbsence, verifyCompactAnswer, verifyRecord } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../access/api-keys.ts';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { LOOKUP_ANSWERS_FILE, recordPath } from '../../core/layout.ts';
import { BIN, cliEnv, runCli } from '../support/cli.ts';
import { camelCaseInOutput } from '../support/json-members.ts';
import { NOV, vkeyFile } from '../support/logged-project.ts';
import { mirrorCli, packedProject } from '../support/mirror.ts';
import { GOLD, type Project, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';
import { publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { poll, waitForExit } from '../support/wait.ts';

const BUCKET = 'mvr-mirror-serve';
let s3: TestS3;
let project: Project;
let dir: string;
let child: ChildProcess;
let url: string;
let key: string;

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  project = await packedProject(NOV);
  await publishTo(s3, BUCKET, 'prod', project);
  const cwd = await tempDir('mvr-mirror-serve-');
  dir = join(cwd, 'mirror');
  const mirrored = await mirrorCli(s3, `s3://${BUCKET}/prod`, dir, project);
  expect(mirrored.code, mirrored.stderr).toBe(0);
  expect(camelCaseInOutput(mirrored)).toEqual([]);
  const apiKeys = join(cwd, 'api-keys.json');
  ({ key } = await createApiKey(apiKeys, 'mirror'));
  child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--records', dir, '--api-keys', apiKeys], {
    cwd,
    env: cliEnv(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  const found = await poll(
    async () => /"msg":"listening","url":"([^"]+)"/.exec(out)?.[1] ?? null,
    (u) => u !== null,
    { timeoutMs: 20_000, intervalMs: 50 },
  );
  url = found.value!;
}, 60_000);
afterAll(async () => {
  child?.kill('SIGTERM');
  if (child) await waitForExit(child, 'mvr serve on the mirror', () => '');
  await s3.close();
  await removeTempDirs();
});

const get = async (path: string, auth = false) => {
  const res = await fetch(`${url}${path}`, auth ? { headers: { authorization: `Bearer ${key}` } } : {});
  return { status: res.status, text: await res.text() };
};

describe('mvr serve --records on a mirror, with no other flag', () => {
  it("serves the mirror's own key set and log key, not a public folder's", async () => {
    expect(await get('/.well-known/merchant-verify-keys.json')).toEqual({ status: 200, text: await readFile(project.keySetFile, 'utf8') });
    const vkey = await get('/.well-known/merchant-verify-log.vkey');
    expect(vkey.status).toBe(200);
    expect(vkey.text.trim()).toBe((await readFile(join(project.publicDir, '.well-known', 'merchant-verify-log.vkey'), 'utf8')).trim());
  });

  it("answers an audited domain with its record, read from the mirror's packs and verified against the mirror's key set", async () => {
    const res = await get(`/v1/verify?domain=${GOLD}`, true);
    expect(res.status).toBe(200);
    const keySet = JSON.parse(await readFile(project.keySetFile, 'utf8')) as unknown;
    expect(verifyRecord(JSON.parse(res.text), keySet, { domain: GOLD })).toMatchObject({ valid: true, keyId: project.kid });
  });

  it('writes the compact answers from its checked map, the same bytes the build wrote, and serves them', async () => {
    const mine = await readFile(join(dir, 'current', LOOKUP_ANSWERS_FILE));
    expect(mine.equals(await readFile(join(project.recordsDir, 'current', LOOKUP_ANSWERS_FILE)))).toBe(true);
    const { statement } = JSON.parse((await get('/v1/lookup', true)).text);
    const bits = statement.lookup.bits as number;
    const hex = bucketHex(bucketOf(createHash('sha256').update(GOLD).digest(), bits), bits);
    const res = await fetch(`${url}/v1/lookup/${bits}/${hex}`, { headers: { authorization: `Bearer ${key}` } });
    const keySet = JSON.parse(await readFile(project.keySetFile, 'utf8')) as unknown;
    const answer = new Uint8Array(await res.arrayBuffer());
    expect(verifyCompactAnswer({ domain: GOLD, answer, statement, keySet })).toMatchObject({ code: null, entry: { domain: GOLD } });
  });

  it("answers a never-audited domain with an absence proof that verifies, its statement proven in the mirror's log", async () => {
    const res = await get(`/v1/absence?domain=${UNAUDITED}`, true);
    expect(res.status).toBe(200);
    const keySet = JSON.parse(await readFile(project.keySetFile, 'utf8')) as unknown;
    const vkey = (await get('/.well-known/merchant-verify-log.vkey')).text.trim();
    const verdict = verifyAbsence(JSON.parse(res.text), UNAUDITED, keySet, { log: { vkey } });
    expect(verdict).toMatchObject({ valid: true });
    expect(verdict.valid && verdict.statementLog?.index).toBeGreaterThan(0);
  });

  it("answers mvr verify --log from the mirror's log files: a record's own proof verifies, the bundle verifies offline", async () => {
    const logged = await runCli(['verify', GOLD, '--base-url', url, '--api-key', key, '--log', '--json']);
    expect(logged.code, logged.stdout).toBe(0);
    expect(JSON.parse(logged.stdout)).toMatchObject({ valid: true, log: { valid: true } });
    const vkeyFile = join(dir, 'public', '.well-known', 'merchant-verify-log.vkey');
    for (const [domain, code] of [
      [GOLD, null],
      [UNAUDITED, 'NEVER_AUDITED'],
    ] as const) {
      const bundle = await get(`/v1/bundle?domain=${domain}`, true);
      expect(bundle.status).toBe(200);
      const file = join(dir, '..', `${domain}.bundle.json`);
      await writeFile(file, bundle.text);
      const offline = await runCli(['verify', domain, '--bundle', file, '--keys', project.keySetFile, '--log-key', vkeyFile, '--json']);
      expect(offline.code, offline.stdout).toBe(code === null ? 0 : exitCodeOf(code));
      expect(JSON.parse(offline.stdout)).toMatchObject({ code, statement: { valid: true } });
    }
  });
});

describe('mvr verify --mirror --log, offline', () => {
  it("a record: its own log proof, made from the mirror's shard entries and tiles, verifies against the mirror's log key; its bundle proves it current", async () => {
    const r = await runCli(['verify', GOLD, '--mirror', dir, '--log', '--json']);
    expect(r.code, r.stdout).toBe(0);
    expect(camelCaseInOutput(r)).toEqual([]);
    // Its place in the live build's map and the statement, last in the mirror's checkpoint: the bundle a gateway on the mirror serves.
    expect(JSON.parse(r.stdout)).toMatchObject({
      valid: true,
      code: null,
      log: { valid: true },
      place: { valid: true },
      statement: { valid: true, log: { valid: true } },
      current: true,
    });
    const text = await runCli(['verify', GOLD, '--mirror', dir, '--log']);
    expect(text.stdout).toMatch(/^ {2}place {6}leaf \d+ of the build's domain map$/m);
    expect(text.stdout).not.toMatch(/NOT PROVEN/);
  });

  it("--log-key pins the log key instead of the mirror's own: the build's key verifies, another log's key is refused", async () => {
    const pinned = await runCli(['verify', GOLD, '--mirror', dir, '--log-key', vkeyFile(project), '--json']);
    expect(pinned.code, pinned.stdout).toBe(0);
    expect(JSON.parse(pinned.stdout)).toMatchObject({ valid: true, log: { valid: true }, current: true });
    const other = await runCli(['keygen', '--log', '--keys', join(await tempDir('mvr-other-log-'), 'keys'), '--json']);
    const otherKey = join(await tempDir('mvr-other-log-'), 'log.vkey');
    await writeFile(otherKey, `${JSON.parse(other.stdout).vkey}\n`);
    const refused = await runCli(['verify', GOLD, '--mirror', dir, '--log-key', otherKey, '--json']);
    expect(refused.code).not.toBe(0);
    expect(JSON.parse(refused.stdout)).toMatchObject({ valid: false, log: { valid: false } });
  });

  it('a never-audited domain: its absence proof, its statement proven in the log (exit 15, NEVER_AUDITED)', async () => {
    const r = await runCli(['verify', UNAUDITED, '--mirror', dir, '--log', '--json']);
    expect(r.code, r.stdout).toBe(exitCodeOf('NEVER_AUDITED'));
    expect(JSON.parse(r.stdout)).toMatchObject({ code: 'NEVER_AUDITED', absence: { valid: true, log: { valid: true } } });
  });

  it('a mirror that keeps no log entry of the record (made before mirrors kept them): NOT_IN_LOG, saying no proof is kept', async () => {
    const copy = join(await tempDir('mvr-mirror-old-'), 'mirror');
    await cp(dir, copy, { recursive: true, verbatimSymlinks: true });
    await rm(join(copy, 'current', recordPath(GOLD).slice(0, 2), 'log.jsonl'));
    const r = await runCli(['verify', GOLD, '--mirror', copy, '--log', '--json']);
    expect(r.code, r.stdout).toBe(exitCodeOf('NOT_IN_LOG'));
    const out = JSON.parse(r.stdout) as { code: string; signature: { valid: boolean }; log: { code: string; message: string } };
    expect([out.code, out.signature.valid, out.log.code]).toEqual(['NOT_IN_LOG', true, 'NOT_IN_LOG']);
    expect(out.log.message).toContain('keeps no log proof');
  });
});
