/**
 * `POST /mcp` on the real gateway, through the real MCP SDK client over Streamable HTTP:
 * the `verify_merchant` tool is described for agents, answers with the very bytes
 * `GET /v1/verify` serves, reports caller-fixable failures as `isError` results, and sits
 * behind the same Bearer keys.
 */
import { createHash } from 'node:crypto';
import { rename } from 'node:fs/promises';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectCauseLogged } from '../support/gateway-expect.ts';
import { connectHttpClient, firstText } from '../support/mcp.ts';
import { liveRecord } from '../support/outputs.ts';
import { GOLD, makeProject, UNAUDITED } from '../support/project.ts';
import { waitFor } from '../support/wait.ts';

let gw: TestGateway;
let client: Client;

beforeAll(async () => {
  gw = await startTestGateway(await makeProject());
  client = await connectHttpClient(gw.url, gw.key);
});
afterAll(async () => {
  await client?.close();
  await cleanup();
});

const call = (domain: string) => client.callTool({ name: 'verify_merchant', arguments: { domain } });

describe('verify_merchants over Streamable HTTP', () => {
  it("gives each domain verify_merchant's verdict: one valid, one never audited (NEVER_AUDITED), an invalid domain a problem", async () => {
    const domains = [GOLD, UNAUDITED, 'co.uk'];
    const batch = (await client.callTool({ name: 'verify_merchants', arguments: { domains } })) as unknown as {
      isError?: boolean;
      structuredContent: { results: { domain: string; verification?: Record<string, unknown>; problem?: { code: string } }[] };
    };
    expect(batch.isError).toBeFalsy();
    const [gold, never, invalid] = batch.structuredContent.results;
    // The same verification JSON as verify_merchant's structured result, the record beside it rather than in it.
    for (const [result, domain] of [
      [gold, GOLD],
      [never, UNAUDITED],
    ] as const) {
      const one = (await call(domain)).structuredContent as Record<string, unknown>;
      const { record: _record, ...verification } = one;
      expect(result!.verification).toEqual({ ...verification, age: expect.any(Object) });
    }
    expect(gold!.verification).toMatchObject({ valid: true, code: null, domain: GOLD, signature: { valid: true } });
    expect(never!.verification).toMatchObject({ valid: false, code: 'NEVER_AUDITED', absence: { valid: true } });
    expect(invalid).toMatchObject({ domain: 'co.uk', problem: { code: 'INVALID_DOMAIN' } });
    expect(invalid).not.toHaveProperty('verification');
  });
});

describe('verify_merchant over Streamable HTTP', () => {
  it('listTools shows verify_merchant with a title, an agent-facing description, an outputSchema and read-only annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['verify_merchant', 'verify_merchants', 'merchant_history']);
    const tool = tools[0]!;
    expect(tool.title).toBeTruthy();
    const d = tool.description ?? '';
    for (const word of ['verified', 'provisional', 'flagged', 'unverified', 'gold', 'silver', 'bronze']) expect(d, word).toContain(word);
    // The key set URL of this gateway (it was reached on a loopback address).
    expect(d).toContain(`${gw.url}${KEY_SET_PATH}`);
    expect(tool.inputSchema).toMatchObject({ type: 'object', required: ['domain'] });
    expect(tool.outputSchema).toMatchObject({ type: 'object' });
    // The verdict first, each step, then the record itself.
    const properties = tool.outputSchema?.properties as Record<string, { properties?: Record<string, unknown> }>;
    expect(Object.keys(properties)).toEqual([
      'valid',
      'code',
      'message',
      'domain',
      'domain_unicode',
      'signature',
      'absence',
      'entry',
      'log',
      'place',
      'statement',
      'witnesses',
      'current',
      'age',
      'staleness',
      'trust',
      'claims',
      'record',
      'bundle',
    ]);
    // The record, or null (a private lookup's entry verdict: the record was not fetched).
    const record = (properties.record as { anyOf?: { properties?: Record<string, unknown> }[] }).anyOf?.find((s) => s.properties);
    expect(Object.keys(record?.properties ?? {})).toEqual(
      expect.arrayContaining([
        'schema',
        'domain',
        'status',
        'tier',
        'score',
        'max_score',
        'sub_scores',
        'flags',
        'evidence',
        'last_audited_at',
        'next_audit_at',
        'key_id',
        'signature',
      ]),
    );
    expect(tool.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  });

  it('a signed record: structuredContent is its verification (valid) and the record; the text is byte for byte the body of GET /v1/verify', async () => {
    const result = await call(GOLD);
    expect(result.isError).toBeFalsy();
    const text = firstText(result);
    const http = await gw.verify(GOLD);
    expect(http.status).toBe(200);
    expect(text).toBe(http.text);
    expect(Buffer.from(text)).toEqual((await liveRecord(gw.project, GOLD)).bytes);
    const structured = result.structuredContent as Record<string, any>;
    expect(structured).toMatchObject({ valid: true, code: null, domain: GOLD, signature: { valid: true, key_id: gw.project.kid } });
    expect(structured.record).toEqual(JSON.parse(text));
    expect(structured.record).toMatchObject({ domain: GOLD, status: 'verified', tier: 'gold', key_id: gw.project.kid });
    expect(String(structured.record.signature)).toMatch(/^ed25519:[A-Za-z0-9_-]{86}$/);
  });

  it('normalizes the domain like the HTTP endpoint (a URL on the shop gives the same record)', async () => {
    const result = await call('https://WWW.Acme-Outdoor.example:443/tents?color=red');
    expect(firstText(result)).toBe((await gw.verify(GOLD)).text);
  });

  it('an unaudited domain: status unverified, score null, unsigned', async () => {
    const result = await call(UNAUDITED);
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as Record<string, any>;
    // A proven absence is its own verdict, never valid.
    expect(structured).toMatchObject({ valid: false, code: 'NEVER_AUDITED', absence: { valid: true } });
    expect(structured.record).toMatchObject({ domain: UNAUDITED, status: 'unverified', tier: null, score: null, max_score: 100 });
    expect(structured.record).not.toHaveProperty('signature');
    expect(JSON.parse(firstText(result))).toEqual(structured.record);
  });

  it("private: true on the gateway's own /mcp: says the gateway already sees the domain, and answers through compact answers with the same verdicts (one domain or a batch)", async () => {
    const { tools } = await client.listTools();
    const described = (tools[0]!.inputSchema.properties as Record<string, { description?: string }>).private?.description ?? '';
    expect(described).toContain('it already sees the domain you send: private hides nothing from it');
    const privately = (domain: string) => client.callTool({ name: 'verify_merchant', arguments: { domain, private: true } });
    const gold = await privately(GOLD);
    expect(gold.isError, firstText(gold)).toBeFalsy();
    // The verdict from GOLD's map entry: the record's claims and the hash of its bytes as a plain lookup gets them, no record, no second text item.
    const plain = (await gw.verify(GOLD)).text;
    const record = JSON.parse(plain);
    expect(gold.structuredContent).toMatchObject({
      valid: true,
      code: null,
      domain: GOLD,
      signature: null,
      entry: { valid: true, record_fetched: false, record_hash: createHash('sha256').update(plain).digest('base64') },
      claims: { status: record.status, tier: record.tier, score: record.score, next_audit_at: record.next_audit_at },
      log: null,
      record: null,
    });
    expect(gold.content).toHaveLength(1);
    expect(JSON.parse(firstText(gold))).toMatchObject({ domain: GOLD, status: record.status, record_fetched: false });
    const never = await privately(UNAUDITED);
    expect(never.structuredContent).toMatchObject({
      valid: false,
      code: 'NEVER_AUDITED',
      absence: { valid: true },
      record: { domain: UNAUDITED, status: 'unverified', score: null },
    });
    // verify_merchants takes it too: the same verdicts, an invalid domain a problem in its place.
    const batch = await client.callTool({ name: 'verify_merchants', arguments: { domains: [GOLD, UNAUDITED, 'co.uk'], private: true } });
    expect(batch.isError, firstText(batch)).toBeFalsy();
    expect((batch.structuredContent as { results: unknown[] }).results).toMatchObject([
      { domain: GOLD, verification: { valid: true, code: null, entry: { record_fetched: false } }, record: null },
      { domain: UNAUDITED, verification: { code: 'NEVER_AUDITED', absence: { valid: true } }, record: { status: 'unverified' } },
      { domain: 'co.uk', problem: { code: 'INVALID_DOMAIN' } },
    ]);
  });

  it.each(['co.uk', 'localhost', 'github.io', '127.0.0.1'])(
    'an invalid domain (%s) is an isError result starting INVALID_DOMAIN',
    async (domain) => {
      const result = await call(domain);
      expect(result.isError).toBe(true);
      expect(firstText(result)).toMatch(/^INVALID_DOMAIN/);
      expect(result.structuredContent).toBeUndefined();
    },
  );

  it('records unavailable (records folder renamed away): isError with STORE_UNAVAILABLE, never an unverified record', async () => {
    const { recordsDir } = gw.project;
    await rename(recordsDir, `${recordsDir}.away`);
    try {
      // A verified record may be answered from memory until the gateway's next look at the folder
      // (every refreshMs); wait until the HTTP endpoint says so, then MCP must agree.
      await waitFor(async () => (await gw.verify(GOLD)).status === 503, 'the gateway to notice the missing records');
      expect(JSON.parse((await gw.verify(UNAUDITED)).text)).toMatchObject({ code: 'STORE_UNAVAILABLE' });
      for (const domain of [GOLD, UNAUDITED]) {
        const result = await call(domain);
        expect(result.isError, domain).toBe(true);
        expect(firstText(result)).toMatch(/^STORE_UNAVAILABLE/);
        // The result says what; the folder is named in the log line of the id it quotes.
        const id = /request_id ([0-9a-f-]{36})/.exec(firstText(result))?.[1];
        expectCauseLogged(gw, { code: 'STORE_UNAVAILABLE', request_id: id }, [recordsDir]);
        expect(firstText(result)).not.toContain(recordsDir);
      }
    } finally {
      await rename(`${recordsDir}.away`, recordsDir);
    }
    // Back: the gateway finds the build again.
    await waitFor(async () => (await gw.verify(GOLD)).status === 200, 'the gateway to find the records again');
    const again = await call(GOLD);
    expect(again.isError).toBeFalsy();
  });
});

describe('/mcp authentication and methods', () => {
  it('the SDK client cannot connect without a key or with a wrong key (401)', async () => {
    await expect(connectHttpClient(gw.url, null)).rejects.toMatchObject({ code: 401 });
    await expect(connectHttpClient(gw.url, 'mvr_0000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).rejects.toMatchObject({
      code: 401,
    });
  });

  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

  it('a raw POST /mcp without a key is 401 with WWW-Authenticate: Bearer', async () => {
    const res = await fetch(`${gw.url}/mcp`, { method: 'POST', headers, body: initialize });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });

  it('a raw POST /mcp with a wrong key is 401 with error="invalid_token"', async () => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: 'Bearer not-a-key' },
      body: initialize,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b.*error="invalid_token"/);
    await res.body?.cancel();
  });

  it('a raw 2025-era initialize with the key is answered with JSON, statelessly (no session id)', async () => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${gw.key}` },
      body: initialize,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(await res.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { protocolVersion: '2025-06-18', serverInfo: { name: 'merchant-verify' } },
    });
  });

  it('GET /mcp is 405 (no SSE stream), with Allow: POST', async () => {
    const res = await fetch(`${gw.url}/mcp`, { headers: { authorization: `Bearer ${gw.key}`, accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    await res.body?.cancel();
  });
});
