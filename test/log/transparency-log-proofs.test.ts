/**
 * The transparency log end to end, on real files, real signatures and the real gateway: the
 * build appends every record, the gateway serves the tiles and a proof for every record (over
 * HTTP and MCP), the portable verifier checks them; and every way a proof can be wrong is refused.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyAbsence, verifyLogProof, verifyRecord } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { formatTlogProof, parseCheckpoint, parseNote, parseTlogProof } from '#shared';
import { parseTilePath } from '../../core/tlog/tiles.ts';
import { generateLogKeyText, parseLogKey, signNote } from '../../keyring/log-key.ts';
import { cleanup } from '../support/gateway.ts';
import { expectCauseLogged, expectProblem } from '../support/gateway-expect.ts';
import { logDir, twoLoggedMonths } from '../support/logged-project.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { snapshot } from '../support/outputs.ts';
import { ISSUER, removeTempDirs } from '../support/project.ts';

afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

describe('a logged build, two months running', async () => {
  const { p, nov, novCheckpoint, novFiles, dec, g, vkey, keySet, domains } = await twoLoggedMonths();

  it('appends every record once a build, reports it, and names the entries in the manifest', async () => {
    expect(nov.log).toMatchObject({ origin: `${ISSUER}/log`, from: 0, to: 34, statement: 33 });
    expect(dec.log).toMatchObject({ from: 34, to: 68, statement: 67 });
    // Under 256 entries, a build writes one partial level-0 tile (32 bytes a hash) and one
    // partial entry bundle (2 + 32 bytes an entry) of the new size.
    expect(nov.log).toMatchObject({ tiles: 2, bytes: 34 * 32 + 34 * 34 });
    expect(dec.log).toMatchObject({ tiles: 2, bytes: 68 * 32 + 68 * 34 });
    const manifest = JSON.parse(await readFile(join(p.recordsDir, 'current', 'manifest.json'), 'utf8')) as { log: unknown };
    expect(manifest.log).toEqual({ origin: `${ISSUER}/log`, from: 34, to: 68, statement: 67 });
    const cp = parseCheckpoint(parseNote(await readFile(join(logDir(p), 'checkpoint'), 'utf8')).text);
    expect(cp.size).toBe(68);
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
      expect(result, domain).toMatchObject({ valid: true, checkpoint: { size: 68, origin: `${ISSUER}/log` } });
      if (result.valid) indexes.push(result.index);
    }
    // Domain order: the second month's entries 34..66, one per domain, sorted as the domains are.
    expect(indexes).toEqual(Array.from({ length: 33 }, (_, i) => 34 + i));
  });

  it('refuses a tampered record, a wrong salt, a wrong index, another key, another origin, and garbage', async () => {
    const domain = 'acme-outdoor.example';
    const record = (await g.verify(domain)).json as Record<string, unknown>;
    const text = (await g.request(`/v1/proof?domain=${domain}`)).text;
    const proof = parseTlogProof(text);
    expect(verifyLogProof({ ...record, score: 99 }, text, { vkey })).toMatchObject({ valid: false, code: 'NOT_INCLUDED' });
    const salt = new Uint8Array(proof.extra!);
    salt[0]! ^= 1;
    expect(verifyLogProof(record, formatTlogProof({ ...proof, extra: salt }), { vkey })).toMatchObject({
      valid: false,
      code: 'NOT_INCLUDED',
    });
    expect(verifyLogProof(record, formatTlogProof({ ...proof, index: proof.index + 1 }), { vkey })).toMatchObject({
      valid: false,
      code: 'NOT_INCLUDED',
    });
    expect(verifyLogProof(record, formatTlogProof({ ...proof, extra: null }), { vkey })).toMatchObject({
      valid: false,
      code: 'MALFORMED_PROOF',
    });
    expect(verifyLogProof(record, 'c2sp.org/tlog-proof@v1\nnonsense\n', { vkey })).toMatchObject({ valid: false, code: 'MALFORMED_PROOF' });
    // The same checkpoint signed by another key of the same name: not the log's signature.
    const impostor = parseLogKey(generateLogKeyText(`${ISSUER}/log`), 'impostor');
    const forged = signNote(impostor, parseNote(proof.checkpoint).text);
    expect(verifyLogProof(record, formatTlogProof({ ...proof, checkpoint: forged }), { vkey })).toMatchObject({
      valid: false,
      code: 'CHECKPOINT_NOT_SIGNED',
    });
    // The real key, but the caller expects another log.
    expect(verifyLogProof(record, text, { vkey, origin: 'other.example/log' })).toMatchObject({
      valid: false,
      code: 'LOG_ORIGIN_MISMATCH',
    });
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
    for (const bad of [
      '/log/',
      '/log/tile/0/0',
      '/log/tile/0/999',
      '/log/tile/0/000.p/999',
      '/log/checkpoint.txt',
      '/log/..%2Fcheckpoint',
      '/log/tile/0/x000/000.p/66',
    ]) {
      expectProblem(await g.request(bad, { key: null }), 404, 'NOT_FOUND');
    }
    expectProblem(await g.request('/log/checkpoint', { key: null, method: 'POST' }), 405, 'METHOD_NOT_ALLOWED');
    // Tiles past the checkpoint (left by a build that failed after writing them) are not public yet:
    // a later build may write other bytes there, and a year's cache would keep the wrong ones.
    const orphans = ['tile/0/000.p/69', 'tile/entries/000.p/69', 'tile/0/000'];
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
    expect(verifyLogProof(oldRecord, r.text, { vkey })).toMatchObject({
      valid: true,
      index: domains.indexOf(domain),
      checkpoint: { size: 34 },
    });
    expect(parseTlogProof(r.text).checkpoint).toBe(novCheckpoint);
    expect(verifyLogProof(liveRecord, r.text, { vkey })).toMatchObject({ valid: false, code: 'NOT_INCLUDED' });
    // The live build asked by its id is the live proof.
    expect((await g.request(`/v1/proof?domain=${domain}&build=${live!.id}`)).text).toBe(
      (await g.request(`/v1/proof?domain=${domain}`)).text,
    );
    // Ids match exactly, case included. Lower case: the id's time part always holds an upper-case
    // T and Z, while its hex digest part may hold no letter at all.
    const otherCase = older!.id.toLowerCase();
    expect(otherCase).not.toBe(older!.id);
    for (const unknown of ['2001-01-01T000000Z', '', '../current', otherCase]) {
      expectProblem(await g.request(`/v1/proof?domain=${domain}&build=${encodeURIComponent(unknown)}`), 404, 'BUILD_NOT_FOUND');
    }
    expectProblem(await g.request(`/v1/proof?domain=${domain}&build=${older!.id}&build=${live!.id}`), 400, 'INVALID_REQUEST');
    expectProblem(await g.request(`/v1/proof?domain=never-audited.example&build=${older!.id}`), 404, 'NOT_IN_LOG');
  });

  it('a proof whose tiles cannot be read is 503 UNAVAILABLE (not 500), and is back once they are', async () => {
    const tile = join(logDir(p), 'tile/0/000.p/68');
    const saved = await readFile(tile);
    await rm(tile);
    try {
      const r = await g.request('/v1/proof?domain=acme-outdoor.example');
      // The answer says what; which tile and why is in the request's log line.
      expectCauseLogged(g, expectProblem(r, 503, 'UNAVAILABLE'), [/tiles for acme-outdoor\.example cannot be read/]);
    } finally {
      await writeFile(tile, saved);
    }
    expect((await g.request('/v1/proof?domain=acme-outdoor.example')).status).toBe(200);
  });

  it('MCP verify_merchant with include_proof: the record and its proof, from one build; without it, the record alone', async () => {
    const client = await connectHttpClient(g.url, g.key);
    type ToolResult = { content: { type: string; text: string }[]; structuredContent: Record<string, unknown>; isError?: boolean };
    const proven = (await client.callTool({
      name: 'verify_merchant',
      arguments: { domain: 'https://www.acme-outdoor.example/tents', include_proof: true },
    })) as unknown as ToolResult;
    expect(proven.isError).toBeFalsy();
    expect(proven.content).toHaveLength(2);
    expect(proven.content[0]!.text).toBe((await g.verify('acme-outdoor.example')).text);
    expect(proven.structuredContent).toMatchObject({ valid: true, log: { valid: true } });
    expect(verifyLogProof(proven.structuredContent.record, proven.content[1]!.text, { vkey })).toMatchObject({ valid: true });
    const plain = (await client.callTool({
      name: 'verify_merchant',
      arguments: { domain: 'acme-outdoor.example' },
    })) as unknown as ToolResult;
    expect(plain.content).toHaveLength(1);
    // A domain never audited: its unverified record, and the proof of that instead of a log proof.
    const never = (await client.callTool({
      name: 'verify_merchant',
      arguments: { domain: 'never-audited.example', include_proof: true },
    })) as unknown as ToolResult;
    expect(never.isError).toBeFalsy();
    expect(never.structuredContent).toMatchObject({ code: 'NEVER_AUDITED', record: { status: 'unverified' } });
    expect(
      verifyAbsence(JSON.parse(never.content[1]!.text), 'never-audited.example', JSON.parse(await readFile(p.keySetFile, 'utf8'))),
    ).toMatchObject({ valid: true });
    // private with include_proof: the log step is the build statement's entry (the record's own proof would name the domain).
    const privately = (await client.callTool({
      name: 'verify_merchant',
      arguments: { domain: 'acme-outdoor.example', include_proof: true, private: true },
    })) as unknown as ToolResult;
    expect(privately.content).toHaveLength(1);
    expect(privately.structuredContent).toMatchObject({ valid: true, log: { valid: true, index: dec.log?.statement } });
    await client.close();
  });
});
