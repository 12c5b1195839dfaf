/**
 * The log as builds follow one another: a build going live between a record and its proof, a log
 * carried to a fresh machine (`mvr log pull`, then build, as CI does), and the same audits, keys
 * and time writing the same log; and `mvr verify --log` online and offline.
 */

import { cp, mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { verifyLogProof } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogKey, logOrigin } from '../../keyring/log-key.ts';
import { audit, jsonl } from '../support/audits.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { DEC, gatewayOver, logDir, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { snapshot } from '../support/outputs.ts';
import { build, copyProject, ISSUER, makeProject, type Project, removeTempDirs, tempDir } from '../support/project.ts';
import { poll } from '../support/wait.ts';

// A logged build of November, and a copy of it built again in December: made once, and each test
// that builds on one builds on a copy of its own (the describes and their tests run side by side).
let nov: Project;
let novDec: Project;
beforeAll(async () => {
  nov = await loggedProject();
  await build(nov, { now: NOV });
  novDec = await copyProject(nov);
  await build(novDec, { now: DEC });
});
afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

describe.concurrent('a build going live between a record and its proof', () => {
  const JAN = Date.parse('2027-01-01T00:00:00Z');
  const domain = 'acme-outdoor.example';
  const issuedAt = (reply: { json: unknown }) => (reply.json as { issued_at: string }).issued_at;

  it('GET /v1/verify and GET /v1/proof answer from the build the gateway serves, not from a newer link', async () => {
    const p = await copyProject(nov);
    // A gateway that does not look at `current` again for an hour: it serves November.
    const g = await startTestGateway({ ...p, apiKeysFile: join(p.keysDir, 'api-keys.json') }, { refreshMs: 3_600_000 });
    await build(p, { now: DEC });
    const vkey = (await readFile(vkeyFile(p), 'utf8')).trim();
    const record = await g.verify(domain);
    expect(issuedAt(record)).toBe(new Date(NOV).toISOString());
    const proof = await g.request(`/v1/proof?domain=${domain}`);
    expect(verifyLogProof(record.json, proof.text, { vkey })).toMatchObject({ valid: true, checkpoint: { size: 34 } });
    await g.close();
  });

  it('proves records from a records folder whose builds/ is a symlink to another disk', async () => {
    const p = await copyProject(nov);
    const elsewhere = join(await tempDir(), 'store');
    await rename(join(p.recordsDir, 'builds'), elsewhere);
    await symlink(elsewhere, join(p.recordsDir, 'builds'));
    const g = await gatewayOver(p);
    const vkey = (await readFile(vkeyFile(p), 'utf8')).trim();
    const record = await g.verify(domain);
    const proof = await g.request(`/v1/proof?domain=${domain}`);
    expect(proof.status, proof.text).toBe(200);
    expect(verifyLogProof(record.json, proof.text, { vkey })).toMatchObject({ valid: true, checkpoint: { size: 34 } });
    await g.close();
  });

  it('mvr verify --log looks both up once more when the proof is of the newer record', async () => {
    const p = await copyProject(novDec);
    const g = await gatewayOver(p);
    // In front of the gateway: the first record answer is held back until January is live, so
    // the proof asked for next is of January's record while the CLI holds December's.
    const seen: string[] = [];
    const proxy = createServer((req, res) => {
      void (async () => {
        seen.push(req.url!);
        const upstream = await fetch(new URL(req.url!, g.url), {
          headers: req.headers.authorization ? { authorization: req.headers.authorization } : {},
        });
        const body = Buffer.from(await upstream.arrayBuffer());
        if (req.url!.startsWith('/v1/verify') && seen.filter((u) => u.startsWith('/v1/verify')).length === 1) {
          await build(p, { now: JAN });
          await poll(
            () => g.verify(domain),
            (r) => issuedAt(r) === new Date(JAN).toISOString(),
            { timeoutMs: 10_000 },
          );
        }
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream' });
        res.end(body);
      })().catch((error: Error) => res.destroy(error));
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const r = await runCli(['verify', domain, '--base-url', url, '--api-key', g.key, '--log', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ valid: true, log: { valid: true, tree_size: 102 } });
      // Record, proof (of January: not December's record), then both again.
      expect(seen.filter((u) => /^\/v1\/(verify|proof)/.test(u))).toEqual([
        `/v1/verify?domain=${domain}`,
        `/v1/proof?domain=${domain}`,
        `/v1/verify?domain=${domain}`,
        `/v1/proof?domain=${domain}`,
      ]);
    } finally {
      proxy.close();
    }
  });
});

describe.concurrent('a log carried to a fresh machine (CI): mvr log pull, then build', () => {
  // 300 records: a full level-0 tile, a partial one, and a partial level-1 tile to carry.
  const files = { 'many.jsonl': jsonl(...Array.from({ length: 300 }, (_, i) => audit(`shop${i}.example`))) };
  let here: Project, ci: Project, g: TestGateway, novCheckpoint: string;
  beforeAll(async () => {
    here = await makeProject({ sign: true, build: false, files });
    await createLogKey(here.keysDir, logOrigin(ISSUER));
    await build(here, { now: NOV });
    novCheckpoint = await readFile(join(logDir(here), 'checkpoint'), 'utf8');
    g = await gatewayOver(here);
    // The CI runner: the same audits and keys, empty records and public folders.
    ci = await makeProject({ sign: false, build: false, files });
    await cp(here.keysDir, ci.keysDir, { recursive: true });
  });

  it('pulls the checkpoint and the right edge only, and the next build extends the published log as an in-place build would', async () => {
    const pulled = await runCli(['log', 'pull', '--from', `${g.url}/log`, '--public', ci.publicDir, '--json']);
    expect(pulled.code, pulled.stderr).toBe(0);
    // 334 entries (the 300 and the 33 samples, then the build statement): the checkpoint, tile/0/001.p/78, tile/1/000.p/1, tile/entries/001.p/78.
    expect(JSON.parse(pulled.stdout)).toMatchObject({ size: 334, files: 4 });
    expect(
      Object.entries(await snapshot(logDir(ci)))
        .filter(([, v]) => v.startsWith('file:'))
        .map(([f]) => f)
        .sort(),
    ).toEqual(['checkpoint', 'tile/0/001.p/78', 'tile/1/000.p/1', 'tile/entries/001.p/78']);
    await Promise.all([build(ci, { now: DEC }), build(here, { now: DEC })]);
    expect(await readFile(join(logDir(ci), 'checkpoint'), 'utf8')).toBe(await readFile(join(logDir(here), 'checkpoint'), 'utf8'));
    // The files the CI build wrote are exactly the new files of the in-place build.
    const inPlace = await snapshot(logDir(here));
    for (const [path, digest] of Object.entries(await snapshot(logDir(ci)))) expect(inPlace[path], path).toBe(digest);
    const saved = join(await tempDir(), 'checkpoint');
    await writeFile(saved, novCheckpoint);
    const other = await tempDir();
    await mkdir(join(other, 'log'), { recursive: true });
    await writeFile(join(other, 'log', 'checkpoint'), novCheckpoint);
    // Three runs that share nothing, side by side: the check of the in-place log; pulling the
    // same log again changes nothing; pulling over another log is refused.
    const ciLog = await snapshot(logDir(ci));
    const [checked, again, refused] = await Promise.all([
      runCli(['log', 'check', '--checkpoint', saved, '--public', here.publicDir]),
      runCli(['log', 'pull', '--from', `${g.url}/log`, '--public', ci.publicDir]),
      runCli(['log', 'pull', '--from', `${g.url}/log`, '--public', other]),
    ]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(again.code, again.stderr).toBe(0);
    expect(await snapshot(logDir(ci))).toEqual(ciLog);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/already holds another log checkpoint/);
  });
});

describe.concurrent('reproducible: same audits, keys and time, same log', () => {
  // novDec (November, then December) against a project of its audits and keys built from nothing.
  let a: Project, b: Project;
  beforeAll(async () => {
    a = novDec;
    b = await makeProject({ sign: false, build: false });
    await cp(a.keysDir, b.keysDir, { recursive: true });
    await build(b, { now: NOV });
    await build(b, { now: DEC });
  });
  it('writes the same tiles and checkpoint, byte for byte', async () => {
    expect(await snapshot(logDir(b))).toEqual(await snapshot(logDir(a)));
    expect(Object.keys(await snapshot(logDir(a)))).toContain('checkpoint');
  });
});

describe.concurrent('mvr verify --log', () => {
  let p: Project, g: TestGateway;
  beforeAll(async () => {
    p = await copyProject(nov);
    g = await gatewayOver(p);
  });

  it('mvr verify --log: through the gateway, offline with a saved proof, and a tampered record', async () => {
    const online = await runCli(['verify', 'acme-outdoor.example', '--base-url', g.url, '--api-key', g.key, '--log', '--json']);
    expect(online.code, online.stderr).toBe(0);
    expect(JSON.parse(online.stdout).log).toMatchObject({ valid: true, tree_size: 34, origin: `${ISSUER}/log` });
    const dir = await tempDir();
    const record = (await g.verify('acme-outdoor.example')).text;
    await writeFile(join(dir, 'record.json'), record);
    await writeFile(join(dir, 'proof'), (await g.request('/v1/proof?domain=acme-outdoor.example')).text);
    const offline = await runCli([
      'verify',
      '--file',
      join(dir, 'record.json'),
      '--keys',
      p.keySetFile,
      '--log',
      '--proof',
      join(dir, 'proof'),
      '--log-key',
      vkeyFile(p),
    ]);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toMatch(/log {8}included: entry \d+ of 34/);
    // A proof of another domain's record: the signature is fine, the log proof is not.
    await writeFile(join(dir, 'other'), (await g.request('/v1/proof?domain=kite-electronics.example')).text);
    const wrong = await runCli([
      'verify',
      '--file',
      join(dir, 'record.json'),
      '--keys',
      p.keySetFile,
      '--log',
      '--proof',
      join(dir, 'other'),
      '--log-key',
      vkeyFile(p),
    ]);
    expect(wrong.code).toBe(13);
    expect(wrong.stdout).toMatch(/NOT PROVEN: NOT_INCLUDED/);
  });
});
