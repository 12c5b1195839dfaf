/**
 * The transparency log end to end, on real files, real signatures and the real gateway: the
 * build appends every record, the gateway serves the tiles and a proof for every record, the
 * portable verifier checks them, `mvr log check` proves consistency; and every way a proof, a
 * checkpoint or a log can be wrong is refused.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyAbsence, verifyLogProof, verifyRecord } from '@merchant-verify/verifier';
import { emptyEdge, TileAppender, unbundle } from '../../core/tlog/appender.ts';
import { formatCheckpoint, parseCheckpoint } from '@merchant-verify/verifier/tlog/checkpoint';
import { parseNote } from '@merchant-verify/verifier/tlog/note';
import { formatTlogProof, parseTlogProof } from '@merchant-verify/verifier/tlog/proof-text';
import { TileTree } from '../../core/tlog/tile-tree.ts';
import { parseTilePath } from '../../core/tlog/tiles.ts';
import { folderTiles } from '../../builder/tiles.ts';
import { createLogKey, generateLogKeyText, LOG_KEY_FILE, loadLogKey, logOrigin, parseLogKey, signNote } from '../../keyring/log-key.ts';
import { hasher } from '../../core/hash.ts';
import { audit, jsonl } from '../support/audits.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { snapshot } from '../support/outputs.ts';
import { build, buildFails, ISSUER, makeProject, type Project, removeTempDirs, tempDir } from '../support/project.ts';
import { connectHttpClient } from '../support/mcp.ts';

afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

const NOV = Date.parse('2026-11-01T00:00:00Z');
const DEC = Date.parse('2026-12-01T00:00:00Z');
const logDir = (p: { publicDir: string }) => join(p.publicDir, 'log');
const vkeyFile = (p: { publicDir: string }) => join(p.publicDir, '.well-known/merchant-verify-log.vkey');

async function loggedProject(): Promise<Project> {
  const p = await makeProject({ sign: true, build: false });
  await createLogKey(p.keysDir, logOrigin(ISSUER));
  return p;
}

/** A gateway over a build project (the gateway helpers' project shape). */
async function gatewayOver(p: Project) {
  const project: Project = { ...p, apiKeysFile: join(p.keysDir, 'api-keys.json') };
  return startTestGateway(project);
}

describe('the log key', () => {
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

describe('a logged build, two months running', async () => {
  const p = await loggedProject();
  const nov = await build(p, { now: NOV });
  const novCheckpoint = await readFile(join(logDir(p), 'checkpoint'), 'utf8');
  const novFiles = await snapshot(logDir(p));
  const dec = await build(p, { now: DEC });
  const g = await gatewayOver(p);
  const vkey = (await readFile(vkeyFile(p), 'utf8')).trim();
  const keySet = JSON.parse(await readFile(p.keySetFile, 'utf8')) as unknown;
  const domains = (await readdir(join(p.recordsDir, 'current'), { recursive: true })).filter((n) => n.endsWith('.json') && n.includes('/')).map((n) => n.slice(3, -5)).sort();

  it('appends every record once a build, reports it, and names the entries in the manifest', async () => {
    expect(nov.log).toMatchObject({ origin: `${ISSUER}/log`, from: 0, to: 33 });
    expect(dec.log).toMatchObject({ from: 33, to: 66 });
    // Under 256 entries, a build writes one partial level-0 tile (32 bytes a hash) and one
    // partial entry bundle (2 + 32 bytes an entry) of the new size.
    expect(nov.log).toMatchObject({ tiles: 2, bytes: 33 * 32 + 33 * 34 });
    expect(dec.log).toMatchObject({ tiles: 2, bytes: 66 * 32 + 66 * 34 });
    const manifest = JSON.parse(await readFile(join(p.recordsDir, 'current', 'manifest.json'), 'utf8')) as { log: unknown };
    expect(manifest.log).toEqual({ origin: `${ISSUER}/log`, from: 33, to: 66 });
    const cp = parseCheckpoint(parseNote(await readFile(join(logDir(p), 'checkpoint'), 'utf8')).text);
    expect(cp.size).toBe(66);
    expect(domains).toHaveLength(33);
  });

  it('never rewrites a tile: every file of the first month is still there, byte for byte', async () => {
    const now = await snapshot(logDir(p));
    for (const [path, digest] of Object.entries(novFiles)) if (path !== 'checkpoint') expect(now[path], path).toBe(digest);
    expect(now.checkpoint).not.toBe(novFiles.checkpoint);
  });

  it('proves every record of the live build through the gateway, in domain order, and the portable verifier accepts each', async () => {
    const indexes: number[] = [];
    for (const domain of domains) {
      const record = (await g.verify(domain)).json as unknown;
      const r = await g.request(`/v1/proof?domain=${domain}`);
      expect(r.status, domain).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(r.headers.get('vary')).toBe('Authorization');
      expect(verifyRecord(record, keySet).valid).toBe(true);
      const result = verifyLogProof(record, r.text, { vkey });
      expect(result, domain).toMatchObject({ valid: true, checkpoint: { size: 66, origin: `${ISSUER}/log` } });
      if (result.valid) indexes.push(result.index);
    }
    // Domain order: the second month's entries 33..65, one per domain, sorted as the domains are.
    expect(indexes).toEqual(Array.from({ length: 33 }, (_, i) => 33 + i));
  });

  it('refuses a tampered record, a wrong salt, a wrong index, another key, another origin, and garbage', async () => {
    const domain = 'acme-outdoor.example';
    const record = (await g.verify(domain)).json as Record<string, unknown>;
    const text = (await g.request(`/v1/proof?domain=${domain}`)).text;
    const proof = parseTlogProof(text);
    expect(verifyLogProof({ ...record, score: 99 }, text, { vkey })).toMatchObject({ valid: false, code: 'NOT_INCLUDED' });
    const salt = new Uint8Array(proof.extra!);
    salt[0]! ^= 1;
    expect(verifyLogProof(record, formatTlogProof({ ...proof, extra: salt }), { vkey })).toMatchObject({ valid: false, code: 'NOT_INCLUDED' });
    expect(verifyLogProof(record, formatTlogProof({ ...proof, index: proof.index + 1 }), { vkey })).toMatchObject({ valid: false, code: 'NOT_INCLUDED' });
    expect(verifyLogProof(record, formatTlogProof({ ...proof, extra: null }), { vkey })).toMatchObject({ valid: false, code: 'MALFORMED_PROOF' });
    expect(verifyLogProof(record, 'c2sp.org/tlog-proof@v1\nnonsense\n', { vkey })).toMatchObject({ valid: false, code: 'MALFORMED_PROOF' });
    // The same checkpoint signed by another key of the same name: not the log's signature.
    const impostor = parseLogKey(generateLogKeyText(`${ISSUER}/log`), 'impostor');
    const forged = signNote(impostor, parseNote(proof.checkpoint).text);
    expect(verifyLogProof(record, formatTlogProof({ ...proof, checkpoint: forged }), { vkey })).toMatchObject({ valid: false, code: 'CHECKPOINT_NOT_SIGNED' });
    // The real key, but the caller expects another log.
    expect(verifyLogProof(record, text, { vkey, origin: 'other.example/log' })).toMatchObject({ valid: false, code: 'LOG_ORIGIN_MISMATCH' });
    // A proof of the last month's record does not prove this month's.
    expect(verifyLogProof(record, text.replace(/^index \d+$/m, 'index 0'), { vkey })).toMatchObject({ valid: false, code: 'NOT_INCLUDED' });
  });

  it('serves the log without a key: checkpoint for seconds, tiles for a year, only tile paths', async () => {
    const cpReply = await g.request('/log/checkpoint', { key: null });
    expect(cpReply.status).toBe(200);
    expect(cpReply.text).toBe(await readFile(join(logDir(p), 'checkpoint'), 'utf8'));
    expect(cpReply.headers.get('cache-control')).toBe('public, max-age=5');
    expect(cpReply.headers.get('access-control-allow-origin')).toBe('*');
    const tiles = Object.keys(await snapshot(logDir(p))).filter((t) => parseTilePath(t));
    expect(tiles.length).toBeGreaterThan(0);
    for (const t of tiles) {
      const r = await g.request(`/log/${t}`, { key: null });
      expect(r.status, t).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/octet-stream');
      expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(r.bytes).toEqual(await readFile(join(logDir(p), t)));
      expect((await g.request(`/log/${t}`, { key: null, headers: { 'if-none-match': r.headers.get('etag')! } })).status).toBe(304);
    }
    for (const bad of ['/log/', '/log/tile/0/0', '/log/tile/0/999', '/log/tile/0/000.p/999', '/log/checkpoint.txt', '/log/..%2Fcheckpoint', '/log/tile/0/x000/000.p/66']) {
      expectProblem(await g.request(bad, { key: null }), 404, 'NOT_FOUND');
    }
    expectProblem(await g.request('/log/checkpoint', { key: null, method: 'POST' }), 405, 'METHOD_NOT_ALLOWED');
    // Tiles past the checkpoint (left by a build that failed after writing them) are not public yet:
    // a later build may write other bytes there, and a year's cache would keep the wrong ones.
    const orphans = ['tile/0/000.p/67', 'tile/entries/000.p/67', 'tile/0/000'];
    for (const t of orphans) await writeFile(join(logDir(p), t), 'not yet committed');
    try {
      for (const t of orphans) expectProblem(await g.request(`/log/${t}`, { key: null }), 404, 'NOT_FOUND');
    } finally {
      for (const t of orphans) await rm(join(logDir(p), t), { force: true });
    }
    const v = await g.request('/.well-known/merchant-verify-log.vkey', { key: null });
    expect(v.status).toBe(200);
    expect(v.text.trim()).toBe(vkey);
  });

  it('gates /v1/proof like a record: 401 first, 400 for a bad domain, 404 NOT_IN_LOG without a record', async () => {
    expectProblem(await g.request('/v1/proof?domain=acme-outdoor.example', { key: null }), 401, 'UNAUTHORIZED');
    expectProblem(await g.request('/v1/proof?domain=co.uk'), 400, 'INVALID_DOMAIN');
    expectProblem(await g.request('/v1/proof'), 400, 'INVALID_DOMAIN');
    expectProblem(await g.request('/v1/proof?domain=never-audited.example'), 404, 'NOT_IN_LOG');
  });

  it('?build= proves the record of that kept build against the checkpoint it signed, never the live one; an unknown build is 404 BUILD_NOT_FOUND', async () => {
    const domain = 'acme-outdoor.example';
    const [live, older] = (await g.request('/v1/builds')).json.builds as { id: string }[];
    const oldRecord = (await g.request(`/v1/verify?domain=${domain}&build=${older!.id}`)).json as Record<string, unknown>;
    const liveRecord = (await g.verify(domain)).json as Record<string, unknown>;
    expect(oldRecord.issued_at).not.toBe(liveRecord.issued_at);
    const r = await g.request(`/v1/proof?domain=${domain}&build=${older!.id}`);
    expect(r.status).toBe(200);
    expect(verifyLogProof(oldRecord, r.text, { vkey })).toMatchObject({ valid: true, index: domains.indexOf(domain), checkpoint: { size: 33 } });
    expect(parseTlogProof(r.text).checkpoint).toBe(novCheckpoint);
    expect(verifyLogProof(liveRecord, r.text, { vkey })).toMatchObject({ valid: false, code: 'NOT_INCLUDED' });
    // The live build asked by its id is the live proof.
    expect((await g.request(`/v1/proof?domain=${domain}&build=${live!.id}`)).text).toBe((await g.request(`/v1/proof?domain=${domain}`)).text);
    for (const unknown of ['2001-01-01T000000Z', '', '../current', older!.id.toUpperCase()]) {
      expectProblem(await g.request(`/v1/proof?domain=${domain}&build=${encodeURIComponent(unknown)}`), 404, 'BUILD_NOT_FOUND');
    }
    expectProblem(await g.request(`/v1/proof?domain=${domain}&build=${older!.id}&build=${live!.id}`), 400, 'INVALID_REQUEST');
    expectProblem(await g.request(`/v1/proof?domain=never-audited.example&build=${older!.id}`), 404, 'NOT_IN_LOG');
  });

  it('a proof whose tiles cannot be read is 503 UNAVAILABLE (not 500), and is back once they are', async () => {
    const tile = join(logDir(p), 'tile/0/000.p/66');
    const saved = await readFile(tile);
    await rm(tile);
    try {
      const r = await g.request('/v1/proof?domain=acme-outdoor.example');
      expectProblem(r, 503, 'UNAVAILABLE');
      expect(r.json.detail).toMatch(/tiles for acme-outdoor\.example cannot be read/);
    } finally {
      await writeFile(tile, saved);
    }
    expect((await g.request('/v1/proof?domain=acme-outdoor.example')).status).toBe(200);
  });

  it('mvr log check: consistent with last month\'s checkpoint, and --update saves the live one', async () => {
    const saved = join(await tempDir(), 'checkpoint');
    await writeFile(saved, novCheckpoint);
    const r = await runCli(['log', 'check', '--checkpoint', saved, '--log', `${g.url}/log`, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ consistent: true, origin: `${ISSUER}/log`, from: 33, to: 66 });
    const folder = await runCli(['log', 'check', '--checkpoint', saved, '--public', p.publicDir, '--update']);
    expect(folder.code, folder.stderr).toBe(0);
    expect(folder.stdout).toMatch(/grew from 33 to 66 entries/);
    expect(await readFile(saved, 'utf8')).toBe(await readFile(join(logDir(p), 'checkpoint'), 'utf8'));
  });

  it('mvr log check fails when the log rewrote or dropped an entry, even re-signed with the log key', async () => {
    const key = (await loadLogKey(p.keysDir, undefined))!;
    const entries: Uint8Array[] = [];
    for (const t of ['tile/entries/000.p/66']) entries.push(...unbundle(await readFile(join(logDir(p), t))));
    expect(entries).toHaveLength(66);
    const saved = join(await tempDir(), 'checkpoint');
    await writeFile(saved, novCheckpoint);
    const rogue = async (list: Uint8Array[]) => {
      const dir = join(await tempDir(), 'log');
      const appender = new TileAppender(hasher, emptyEdge(), (path, bytes) => {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), bytes);
      });
      for (const e of list) appender.append(e);
      appender.finish();
      const root = await new TileTree(hasher, list.length, folderTiles(dir)).root();
      await writeFile(join(dir, 'checkpoint'), signNote(key, formatCheckpoint({ origin: key.name, size: list.length, root })));
      return runCli(['log', 'check', '--checkpoint', saved, '--log', dir, '--log-key', vkeyFile(p)]);
    };
    // The honest log rebuilt from its own entries passes: the check itself is sound.
    expect((await rogue(entries)).code).toBe(0);
    const rewritten = entries.map((e, i) => (i === 5 ? createHash('sha256').update('rewritten').digest() : e));
    const r1 = await rogue(rewritten);
    expect(r1.code).toBe(14);
    expect(r1.stderr).toMatch(/LOG_INCONSISTENT|not an append-only extension/);
    const r2 = await rogue([...entries.slice(0, 5), ...entries.slice(6)]);
    expect(r2.code).toBe(14);
    // A log that lost entries (smaller than the saved checkpoint) is refused too.
    const r3 = await rogue(entries.slice(0, 20));
    expect(r3.code).toBe(14);
    expect(r3.stderr).toMatch(/fewer than the 33/);
  });

  it('MCP verify_merchant with include_proof: the record and its proof, from one build; without it, the record alone', async () => {
    const client = await connectHttpClient(g.url, g.key);
    type ToolResult = { content: { type: string; text: string }[]; structuredContent: Record<string, unknown>; isError?: boolean };
    const proven = (await client.callTool({ name: 'verify_merchant', arguments: { domain: 'https://www.acme-outdoor.example/tents', include_proof: true } })) as unknown as ToolResult;
    expect(proven.isError).toBeFalsy();
    expect(proven.content).toHaveLength(2);
    expect(proven.content[0]!.text).toBe((await g.verify('acme-outdoor.example')).text);
    expect(verifyLogProof(proven.structuredContent, proven.content[1]!.text, { vkey })).toMatchObject({ valid: true });
    const plain = (await client.callTool({ name: 'verify_merchant', arguments: { domain: 'acme-outdoor.example' } })) as unknown as ToolResult;
    expect(plain.content).toHaveLength(1);
    // A domain never audited: its unverified record, and the proof of that instead of a log proof.
    const never = (await client.callTool({ name: 'verify_merchant', arguments: { domain: 'never-audited.example', include_proof: true } })) as unknown as ToolResult;
    expect(never.isError).toBeFalsy();
    expect(never.structuredContent).toMatchObject({ status: 'unverified' });
    expect(verifyAbsence(JSON.parse(never.content[1]!.text), 'never-audited.example', JSON.parse(await readFile(p.keySetFile, 'utf8')))).toMatchObject({ valid: true });
    await client.close();
  });

  it('mvr verify --log: through the gateway, offline with a saved proof, and a tampered record', async () => {
    const online = await runCli(['verify', 'acme-outdoor.example', '--base-url', g.url, '--api-key', g.key, '--log', '--json']);
    expect(online.code, online.stderr).toBe(0);
    expect(JSON.parse(online.stdout).log).toMatchObject({ valid: true, tree_size: 66, origin: `${ISSUER}/log` });
    const dir = await tempDir();
    const record = (await g.verify('acme-outdoor.example')).text;
    await writeFile(join(dir, 'record.json'), record);
    await writeFile(join(dir, 'proof'), (await g.request('/v1/proof?domain=acme-outdoor.example')).text);
    const offline = await runCli(['verify', '--file', join(dir, 'record.json'), '--keys', p.keySetFile, '--log', '--proof', join(dir, 'proof'), '--log-key', vkeyFile(p)]);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toMatch(/log {8}included: entry \d+ of 66/);
    // A proof of another domain's record: the signature is fine, the log proof is not.
    await writeFile(join(dir, 'other'), (await g.request('/v1/proof?domain=kite-electronics.example')).text);
    const wrong = await runCli(['verify', '--file', join(dir, 'record.json'), '--keys', p.keySetFile, '--log', '--proof', join(dir, 'other'), '--log-key', vkeyFile(p)]);
    expect(wrong.code).toBe(13);
    expect(wrong.stdout).toMatch(/NOT PROVEN: NOT_INCLUDED/);
  });
});

describe('a build going live between a record and its proof', async () => {
  const JAN = Date.parse('2027-01-01T00:00:00Z');
  const domain = 'acme-outdoor.example';
  const issuedAt = (reply: { json: unknown }) => (reply.json as { issued_at: string }).issued_at;

  it('GET /v1/verify and GET /v1/proof answer from the build the gateway serves, not from a newer link', async () => {
    const p = await loggedProject();
    await build(p, { now: NOV });
    // A gateway that does not look at `current` again for an hour: it serves November.
    const g = await startTestGateway({ ...p, apiKeysFile: join(p.keysDir, 'api-keys.json') }, { refreshMs: 3_600_000 });
    await build(p, { now: DEC });
    const vkey = (await readFile(vkeyFile(p), 'utf8')).trim();
    const record = await g.verify(domain);
    expect(issuedAt(record)).toBe(new Date(NOV).toISOString());
    const proof = await g.request(`/v1/proof?domain=${domain}`);
    expect(verifyLogProof(record.json, proof.text, { vkey })).toMatchObject({ valid: true, checkpoint: { size: 33 } });
    await g.close();
  });

  it('proves records from a records folder whose builds/ is a symlink to another disk', async () => {
    const p = await loggedProject();
    await build(p, { now: NOV });
    const elsewhere = join(await tempDir(), 'store');
    await rename(join(p.recordsDir, 'builds'), elsewhere);
    await symlink(elsewhere, join(p.recordsDir, 'builds'));
    const g = await gatewayOver(p);
    const vkey = (await readFile(vkeyFile(p), 'utf8')).trim();
    const record = await g.verify(domain);
    const proof = await g.request(`/v1/proof?domain=${domain}`);
    expect(proof.status, proof.text).toBe(200);
    expect(verifyLogProof(record.json, proof.text, { vkey })).toMatchObject({ valid: true, checkpoint: { size: 33 } });
    await g.close();
  });

  it('mvr verify --log looks both up once more when the proof is of the newer record', async () => {
    const p = await loggedProject();
    await build(p, { now: NOV });
    await build(p, { now: DEC });
    const g = await gatewayOver(p);
    // In front of the gateway: the first record answer is held back until January is live, so
    // the proof asked for next is of January's record while the CLI holds December's.
    const seen: string[] = [];
    const proxy = createServer((req, res) => {
      void (async () => {
        seen.push(req.url!);
        const upstream = await fetch(new URL(req.url!, g.url), { headers: req.headers.authorization ? { authorization: req.headers.authorization } : {} });
        const body = Buffer.from(await upstream.arrayBuffer());
        if (req.url!.startsWith('/v1/verify') && seen.filter((u) => u.startsWith('/v1/verify')).length === 1) {
          await build(p, { now: JAN });
          while (issuedAt(await g.verify(domain)) !== new Date(JAN).toISOString()) await new Promise((r) => setTimeout(r, 20));
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
      expect(JSON.parse(r.stdout)).toMatchObject({ valid: true, log: { valid: true, tree_size: 99 } });
      // Record, proof (of January: not December's record), then both again.
      expect(seen.filter((u) => /^\/v1\/(verify|proof)/.test(u))).toEqual([`/v1/verify?domain=${domain}`, `/v1/proof?domain=${domain}`, `/v1/verify?domain=${domain}`, `/v1/proof?domain=${domain}`]);
    } finally {
      proxy.close();
    }
  });
});

describe('a log carried to a fresh machine (CI): mvr log pull, then build', async () => {
  // 300 records: a full level-0 tile, a partial one, and a partial level-1 tile to carry.
  const files = { 'many.jsonl': jsonl(...Array.from({ length: 300 }, (_, i) => audit(`shop${i}.example`))) };
  const here = await makeProject({ sign: true, build: false, files });
  await createLogKey(here.keysDir, logOrigin(ISSUER));
  await build(here, { now: NOV });
  const novCheckpoint = await readFile(join(logDir(here), 'checkpoint'), 'utf8');
  const g = await gatewayOver(here);
  // The CI runner: the same audits and keys, empty records and public folders.
  const ci = await makeProject({ sign: false, build: false, files });
  await cp(here.keysDir, ci.keysDir, { recursive: true });

  it('pulls the checkpoint and the right edge only, and the next build extends the published log as an in-place build would', async () => {
    const pulled = await runCli(['log', 'pull', '--from', `${g.url}/log`, '--public', ci.publicDir, '--json']);
    expect(pulled.code, pulled.stderr).toBe(0);
    // 333 entries (the 300 and the 33 samples): the checkpoint, tile/0/001.p/77, tile/1/000.p/1, tile/entries/001.p/77.
    expect(JSON.parse(pulled.stdout)).toMatchObject({ size: 333, files: 4 });
    expect(Object.entries(await snapshot(logDir(ci))).filter(([, v]) => v.startsWith('file:')).map(([f]) => f).sort()).toEqual(['checkpoint', 'tile/0/001.p/77', 'tile/1/000.p/1', 'tile/entries/001.p/77']);
    await build(ci, { now: DEC });
    await build(here, { now: DEC });
    expect(await readFile(join(logDir(ci), 'checkpoint'), 'utf8')).toBe(await readFile(join(logDir(here), 'checkpoint'), 'utf8'));
    // The files the CI build wrote are exactly the new files of the in-place build.
    const inPlace = await snapshot(logDir(here));
    for (const [path, digest] of Object.entries(await snapshot(logDir(ci)))) expect(inPlace[path], path).toBe(digest);
    const saved = join(await tempDir(), 'checkpoint');
    await writeFile(saved, novCheckpoint);
    expect((await runCli(['log', 'check', '--checkpoint', saved, '--public', here.publicDir])).code).toBe(0);
    // Pulling the same log again changes nothing; pulling over another log is refused.
    expect((await runCli(['log', 'pull', '--from', `${g.url}/log`, '--public', ci.publicDir])).code).toBe(0);
    const other = await tempDir();
    await mkdir(join(other, 'log'), { recursive: true });
    await writeFile(join(other, 'log', 'checkpoint'), novCheckpoint);
    const refused = await runCli(['log', 'pull', '--from', `${g.url}/log`, '--public', other]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/already holds another log checkpoint/);
  });
});

describe('reproducible: same audits, keys and time, same log', async () => {
  const a = await loggedProject();
  const b = await makeProject({ sign: false, build: false });
  await cp(a.keysDir, b.keysDir, { recursive: true });
  for (const p of [a, b]) {
    await build(p, { now: NOV });
    await build(p, { now: DEC });
  }
  it('writes the same tiles and checkpoint, byte for byte', async () => {
    expect(await snapshot(logDir(b))).toEqual(await snapshot(logDir(a)));
    expect(Object.keys(await snapshot(logDir(a)))).toContain('checkpoint');
  });
});

describe('a build refuses a log that is not what its checkpoint says, and publishes nothing', () => {
  async function builtOnce(): Promise<Project> {
    const p = await loggedProject();
    await build(p, { now: NOV });
    return p;
  }
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
    const file = join(logDir(p), 'tile/0/000.p/33');
    const bytes = await readFile(file);
    bytes[40]! ^= 1;
    await writeFile(file, bytes);
    await refused(p, /do not match its checkpoint/);
  });

  it('an entry bundle that does not hash to its tile', async () => {
    const p = await builtOnce();
    const file = join(logDir(p), 'tile/entries/000.p/33');
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

  it('a log key made for another issuer is a configuration error', async () => {
    const p = await makeProject({ sign: true, build: false });
    await createLogKey(p.keysDir, 'elsewhere.example/log');
    expect((await buildFails(p, { now: NOV })).code).toBe('INVALID_CONFIG');
  });
});

describe('without a log key', async () => {
  const p = await loggedProject();
  await build(p, { now: NOV });
  await rm(join(p.keysDir, LOG_KEY_FILE));
  const warnings: string[] = [];
  const summary = await build(p, { now: DEC, onWarning: (m) => warnings.push(m) });
  const g = await gatewayOver(p);

  it('builds, says the records are not in the log, leaves the log alone, and the gateway answers NOT_IN_LOG', async () => {
    expect(summary.log).toBeNull();
    expect(warnings.join('\n')).toMatch(/NOT appended to the log/);
    expect(parseCheckpoint(parseNote(await readFile(join(logDir(p), 'checkpoint'), 'utf8')).text).size).toBe(33);
    expectProblem(await g.request('/v1/proof?domain=acme-outdoor.example'), 404, 'NOT_IN_LOG');
  });

  it('the CLI build says so in its summary', async () => {
    const q = await makeProject({ sign: true, build: false });
    const r = await runCli(buildArgs(q));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/log: {7}not appended \(no log key\)/);
    expect(r.stderr).toMatch(/no log key configured/);
  });
});
