/**
 * Secret scan. A run that exercises everything: builds, a signing-key rotation and retirement
 * (the real `mvr keygen` commands, then rebuilds), API keys created and revoked (`mvr apikey`),
 * requests with valid, wrong, malformed and revoked keys, an error of every kind (400, 401, 404,
 * 405, 304, 503 STORE_UNAVAILABLE, 503 UNAVAILABLE), MCP calls, and a second gateway serving the
 * same records. Then nothing may hold a raw API key (the whole
 * `mvr_<id>_<secret>` or its secret part) or a private signing key (`d` of any key under
 * keys/signing or keys/retired, or the member `"d":` at all): not a gateway log line, not a file
 * under public/ or records/, not an HTTP response (status line, headers or body), not the output
 * of the CLI (except the one line `mvr apikey create` prints the new key on). The API key file
 * holds only hashes, and key files are mode 0600 (the scan itself: test/support/security/secret-scan.ts).
 */
import { rename } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectNoSecretsInLogs, expectProblem } from '../support/gateway-expect.ts';
import { editLiveRecord, liveRecordBytes } from '../support/packs.ts';
import { build, makeProject, type Project } from '../support/project.ts';
import { apiKeys, call, cli, collectPrivateKeys, forged, mcp, privateDs, req, verify } from '../support/security/secret-run.ts';
import { secretScanSuite } from '../support/security/secret-scan.ts';
import { poll } from '../support/wait.ts';

const KNOWN = 'acme-outdoor.example';
const OTHER = 'gadget-hub.example';
const UNAUDITED = 'never-audited-secret-scan.example';

let p: Project;
let g: TestGateway;
/** The gateway that signs never-audited answers: it holds the private key in memory. */
let second: TestGateway;

beforeAll(async () => {
  p = await makeProject();
  g = await startTestGateway(p);
  second = await startTestGateway(p);
  apiKeys.add(g.key).add(second.key);
  await collectPrivateKeys(p.keysDir);
});

afterAll(async () => {
  try {
    if (g) expectNoSecretsInLogs(g);
    if (second) expectNoSecretsInLogs(second);
  } finally {
    await cleanup();
  }
});

describe('a run that exercises everything', () => {
  it('records, public documents, errors of every kind, wrong and malformed keys', async () => {
    expect((await verify(g, KNOWN)).status).toBe(200);
    expect((await verify(g, 'https://WWW.Acme-Outdoor.example/tents?x=1')).status).toBe(200);
    expect((await verify(g, UNAUDITED)).json.status).toBe('unverified');
    const etag = (await verify(g, KNOWN)).headers.get('etag')!;
    expect((await verify(g, KNOWN, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await verify(g, KNOWN, { method: 'HEAD' })).status).toBe(200);
    for (const path of ['/.well-known/merchant-verify-keys.json', '/schemas/verification/v1', '/openapi.json', '/healthz'])
      expect((await req(g, path)).status).toBe(200);

    expectProblem(await verify(g, 'co.uk'), 400, 'INVALID_DOMAIN');
    expectProblem(await req(g, '/v1/verify'), 400, 'INVALID_DOMAIN');
    expectProblem(await req(g, `/v1/verify?domain=${KNOWN}&domain=${OTHER}`), 400, 'INVALID_DOMAIN');
    expectProblem(await req(g, '/nope'), 404, 'NOT_FOUND');
    expectProblem(await req(g, '/mcp'), 405, 'METHOD_NOT_ALLOWED');
    expectProblem(await req(g, '/v1/verify', { method: 'DELETE' }), 405, 'METHOD_NOT_ALLOWED');

    const wrong = forged();
    apiKeys.add(wrong);
    expectProblem(await verify(g, KNOWN, { key: wrong }), 401, 'UNAUTHORIZED');
    expectProblem(await verify(g, KNOWN, { key: null }), 401, 'UNAUTHORIZED');
    // The valid key in the wrong places: a Basic password, after junk, lower-case scheme (valid), truncated.
    expectProblem(await verify(g, KNOWN, { authorization: `Basic ${Buffer.from(`x:${g.key}`).toString('base64')}` }), 401, 'UNAUTHORIZED');
    expectProblem(await verify(g, KNOWN, { authorization: `Bearer ${g.key} ${g.key}` }), 401, 'UNAUTHORIZED');
    expectProblem(await verify(g, KNOWN, { authorization: `Bearer ${g.key.slice(0, -2)}` }), 401, 'UNAUTHORIZED');
    expect((await verify(g, KNOWN, { authorization: `bearer ${g.key}` })).status).toBe(200);
  });

  it('MCP calls: list, record, never-audited, invalid domain, unknown tool, and without a (valid) key', async () => {
    expect((await mcp(g, `Bearer ${g.key}`, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200);
    const record = await mcp(g, `Bearer ${g.key}`, call(KNOWN));
    expect(record.status).toBe(200);
    expect(record.json.result.structuredContent.domain).toBe(KNOWN);
    expect((await mcp(g, `Bearer ${g.key}`, call(UNAUDITED))).json.result.structuredContent.record.status).toBe('unverified');
    expect((await mcp(g, `Bearer ${g.key}`, call('co.uk'))).json.result.isError).toBe(true);
    expect((await mcp(g, `Bearer ${g.key}`, call(42))).status).toBeLessThan(500);
    expect(
      (await mcp(g, `Bearer ${g.key}`, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'nope', arguments: {} } })).status,
    ).toBeLessThan(500);
    expectProblem(await mcp(g, null, call(KNOWN)), 401, 'UNAUTHORIZED');
    const wrong = forged();
    apiKeys.add(wrong);
    expectProblem(await mcp(g, `Bearer ${wrong}`, call(KNOWN)), 401, 'UNAUTHORIZED');
  });

  it('API keys created and revoked with the CLI: the new key works, then is refused', async () => {
    const created = await cli(['apikey', 'create', '--label', 'secret-scan', '--api-keys', p.apiKeysFile], false);
    const key = created.stdout.trim();
    expect(key).toMatch(/^mvr_[a-z0-9]{10}_[A-Za-z0-9_-]{43}$/);
    expect(created.stdout).toBe(`${key}\n`); // printed once, alone
    apiKeys.add(key);
    g.secrets.add(key);
    const id = key.split('_')[1]!;
    await poll(
      () => verify(g, KNOWN, { key }),
      (r) => r.status === 200,
    );
    expect((await mcp(g, `Bearer ${key}`, call(KNOWN))).status).toBe(200);

    await cli(['apikey', 'revoke', id, '--api-keys', p.apiKeysFile]);
    await poll(
      () => verify(g, KNOWN, { key }),
      (r) => r.status === 401,
    );
    expectProblem(await verify(g, KNOWN, { key }), 401, 'UNAUTHORIZED');
    expectProblem(await mcp(g, `Bearer ${key}`, call(KNOWN)), 401, 'UNAUTHORIZED');
    const list = await cli(['apikey', 'list', '--json', '--api-keys', p.apiKeysFile]);
    const listed = JSON.parse(list.stdout) as { id: string; revoked: string | null }[];
    expect(listed.find((k) => k.id === id)?.revoked).toEqual(expect.any(String));
  });

  it('503s: the records folder gone (STORE_UNAVAILABLE), a tampered record (UNAVAILABLE)', async () => {
    const away = `${p.recordsDir}.away`;
    await rename(p.recordsDir, away);
    try {
      const r = await poll(
        () => verify(g, KNOWN),
        (x) => x.status === 503,
      );
      expectProblem(r.value, 503, 'STORE_UNAVAILABLE');
      expect((await req(g, '/healthz')).json.status).toBe('degraded');
    } finally {
      await rename(away, p.recordsDir);
    }
    await poll(
      () => verify(g, KNOWN),
      (x) => x.status === 200,
    );

    // Tamper with a record the gateway has not cached yet: its signature no longer verifies.
    const original = await liveRecordBytes(p, OTHER);
    // A score a point lower (or 1 for 0) is never longer: it fits where the record was.
    await editLiveRecord(p, OTHER, (record) =>
      JSON.stringify({ ...record, score: (record.score as number) > 0 ? (record.score as number) - 1 : 1 }),
    );
    const r = await verify(g, OTHER);
    if (r.status === 200) {
      // Only acceptable if these are the bytes verified before the change (a warm cache).
      expect(r.bytes.equals(original)).toBe(true);
    } else {
      expectProblem(r, 503, 'UNAVAILABLE');
      expect(g.logs.some((l) => l.msg === 'record rejected')).toBe(true);
    }
  });

  it('a second gateway: requests, an absence proof and MCP calls', async () => {
    // It polls the records folder on its own timer: wait until it has seen the folder come back.
    await poll(
      () => verify(second, KNOWN),
      (x) => x.status === 200,
    );
    const r = await verify(second, UNAUDITED);
    expect(r.status).toBe(200);
    expect(r.json.signature).toBeUndefined();
    expect((await req(second, `/v1/absence?domain=${UNAUDITED}`, { key: second.key })).status).toBe(200);
    expect((await verify(second, KNOWN)).status).toBe(200);
    expect((await req(second, '/healthz')).status).toBe(200);
    expect((await req(second, '/.well-known/merchant-verify-keys.json')).status).toBe(200);
    expect((await mcp(second, `Bearer ${second.key}`, call(UNAUDITED))).status).toBe(200);
    expectProblem(await verify(second, KNOWN, { key: null }), 401, 'UNAUTHORIZED');
  });

  it('signing-key rotation (mvr keygen, rebuild) and retirement (mvr keygen --retire, rebuild)', async () => {
    const oldKid = p.kid!;
    const rotated = await cli(['keygen', '--keys', p.keysDir]);
    const newKid = rotated.stdout.trim();
    expect(newKid).not.toBe(oldKid);
    await collectPrivateKeys(p.keysDir);
    await build(p);
    await poll(
      () => verify(g, KNOWN),
      (r) => r.status === 200 && r.json.key_id === newKid,
    );
    // The tampered record was rebuilt: served again.
    expect((await verify(g, OTHER)).status).toBe(200);
    await cli(['keygen', '--list', '--json', '--keys', p.keysDir]);

    await cli(['keygen', `--retire=${oldKid}`, '--keys', p.keysDir]);
    await collectPrivateKeys(p.keysDir);
    // A retired key stays listed while a kept build was signed by it: with --keep 1 none is.
    await build(p, { keep: 1 });
    const ks = await poll(
      () => req(g, '/.well-known/merchant-verify-keys.json'),
      // Listed no more (the new key's endorsement still names it: that is how a pinned gateway trusts the new key).
      (r) => r.status === 200 && !r.json.keys.some((k: { kid: string }) => k.kid === oldKid),
    );
    expect(ks.value.json.keys.map((k: { kid: string }) => k.kid)).toEqual([newKid]);
    expect((await verify(g, KNOWN)).json.key_id).toBe(newKid);
    expect((await mcp(g, `Bearer ${g.key}`, call(KNOWN))).status).toBe(200);
    expect(privateDs.size).toBe(2);
  });
});

secretScanSuite(() => ({ p, g, second }));
