/**
 * The access log of the gateway in process: one line per request with method, path (no query),
 * status, duration and key id, and never a key or an Authorization header, even for wrong keys.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, type TestGateway, useGateway, waitForLog } from '../support/gateway.ts';
import { expectNoSecretsInLogs } from '../support/gateway-expect.ts';

const KNOWN = 'acme-outdoor.example';
/** A well-formed key (`mvr_<id>_<secret>`) that was never issued. */
const forgedKey = () => `mvr_${randomBytes(5).toString('hex')}_${randomBytes(32).toString('base64url')}`;

let g: TestGateway;

useGateway(async (t) => {
  g = t.g;
});
afterAll(cleanup);

describe('access log', () => {
  it('writes one line per request with method, path (no query), status, duration_ms and key_id', async () => {
    const isRequest = (l: { msg: string }) => l.msg === 'request';
    const before = g.logs.filter(isRequest).length;
    const etag = (await g.verify(KNOWN)).headers.get('etag')!;
    const sent: { method: string; path: string; status: number; keyId: string | null }[] = [
      { method: 'GET', path: '/v1/verify', status: 200, keyId: g.keyId },
    ];
    const step = async (
      method: string,
      path: string,
      status: number,
      keyId: string | null,
      opts: Parameters<TestGateway['request']>[1] = {},
    ) => {
      const r = await g.request(path, { method, ...opts });
      expect(r.status, `${method} ${path}`).toBe(status);
      sent.push({ method, path: path.split('?')[0]!, status, keyId });
    };
    await step('GET', `/v1/verify?domain=${KNOWN}`, 304, g.keyId, { headers: { 'if-none-match': etag } });
    await step('HEAD', `/v1/verify?domain=${KNOWN}`, 200, g.keyId);
    await step('GET', '/v1/verify?domain=never-audited-log.example', 200, g.keyId);
    await step('GET', '/v1/verify?domain=co.uk', 400, g.keyId);
    await step('GET', `/v1/verify?domain=${KNOWN}`, 401, null, { key: null });
    await step('GET', `/v1/verify?domain=${KNOWN}`, 401, null, { key: forgedKey() });
    await step('GET', '/nope?x=1', 404, null, { key: null });
    await step('POST', '/v1/verify', 405, null);
    await step('GET', '/.well-known/merchant-verify-keys.json', 200, null, { key: null });
    await step('GET', '/healthz', 200, null, { key: null });

    // A last request, marked by its path: once its line is in, every earlier request's is (lines
    // are written in the order answers finish, and these were sent one after another).
    await g.request('/end-of-access-log-test', { key: null });
    await waitForLog(g, (l) => isRequest(l) && l.path === '/end-of-access-log-test');
    const all = g.logs.filter(isRequest).slice(before);
    expect(all.at(-1)).toMatchObject({ path: '/end-of-access-log-test', status: 404 });
    const lines = all.slice(0, -1);
    expect(lines).toHaveLength(sent.length);
    lines.forEach((line, i) => {
      const want = sent[i]!;
      expect({ method: line.method, path: line.path, status: line.status, key_id: line.key_id }).toEqual({
        method: want.method,
        path: want.path,
        status: want.status,
        key_id: want.keyId,
      });
      expect(line.level).toBe('info');
      expect(typeof line.duration_ms).toBe('number');
      expect(line.duration_ms as number).toBeGreaterThanOrEqual(0);
      expect(String(line.path)).not.toContain('?');
    });
    // Errors name their code; a served record its normalized domain.
    expect(lines[4]).toMatchObject({ code: 'INVALID_DOMAIN' });
    expect(lines[3]).toMatchObject({ domain: 'never-audited-log.example' });
  });

  it('never logs the key or the Authorization header, even for wrong keys and other schemes', async () => {
    const wrong = forgedKey();
    await g.verify(KNOWN, { key: wrong });
    await g.verify(KNOWN, { authorization: `Basic ${Buffer.from(`me:${g.key}`).toString('base64')}` });
    await g.verify(`https://user:${g.key}@acme-outdoor.example/`);
    await waitForLog(g, (l) => l.msg === 'request' && l.domain === KNOWN && l.status === 200);
    expectNoSecretsInLogs(g);
    // The userinfo of a URL-form domain is not a credential the log may keep either.
    const secret = g.key.replace(/^mvr_[a-z0-9]{10}_/, '');
    expect(secret).toHaveLength(43);
    for (const line of g.logs) expect(JSON.stringify(line)).not.toContain(secret);
  });
});
