/**
 * Answers say what, logs say where: each way a store can fail under the gateway (a record's pack
 * that is a FIFO or a folder, the records folder taken away, the API key file unreadable for over a
 * minute) is answered with its code, its code's words and a request id, and never with a path or
 * a system error; the request's log line under that id names them. Over HTTP, in a batch and in
 * the MCP tools alike. (Buckets, origins and Redis: test/scale/s3-kept-builds.test.ts,
 * test/gateway/http-origin.test.ts, test/scale/redis.test.ts.)
 */
import { execFileSync } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { expectCauseLogged, expectProblem } from '../support/gateway-expect.ts';
import { connectHttpClient, firstText } from '../support/mcp.ts';
import { livePackFile } from '../support/packs.ts';
import { makeProject, onePackARecord } from '../support/project.ts';
import { poll } from '../support/wait.ts';

afterAll(cleanup);

const FIFO = 'knockoff-watches.example';
const FOLDER = 'gadget-hub.example';

describe("a record's pack that is no regular file", () => {
  it("is UNAVAILABLE with a request id over HTTP, in a batch and from MCP; the path is in that request's log line", async () => {
    const project = await onePackARecord();
    const g = await startTestGateway(project);
    const fifo = await livePackFile(project, FIFO);
    await rm(fifo);
    execFileSync('mkfifo', [fifo]);
    const folder = await livePackFile(project, FOLDER);
    await rm(folder);
    await mkdir(folder);

    for (const [domain, why] of [
      [FIFO, 'a FIFO'],
      [FOLDER, 'a folder'],
    ] as const) {
      const r = await g.verify(domain);
      const line = expectCauseLogged(g, expectProblem(r, 503, 'UNAVAILABLE'), [project.root, why]);
      expect(line).toMatchObject({ level: 'warn', msg: 'request failed', method: 'GET', path: '/v1/verify', domain });
      // The access line of the request carries the same id.
      const access = await poll(
        async () => g.logs.find((l) => l.msg === 'request' && l.request_id === r.json.request_id),
        (l) => l !== undefined,
      );
      expect(access.value).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
    }

    const batch = await g.request('/v1/verify/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domains: [FIFO, 'acme-outdoor.example'] }),
    });
    expect(batch.status).toBe(200);
    expect(batch.json.results[1].record.domain).toBe('acme-outdoor.example');
    expectCauseLogged(g, batch.json.results[0].problem, [project.root, 'a FIFO']);

    const client = await connectHttpClient(g.url, g.key);
    try {
      const one = await client.callTool({ name: 'verify_merchant', arguments: { domain: FIFO } });
      expect(one.isError).toBe(true);
      const text = firstText(one);
      expect(text).toMatch(/^UNAVAILABLE \(Record temporarily unavailable\): /);
      const id = /request_id ([0-9a-f-]{36})/.exec(text)?.[1];
      expectCauseLogged(g, { code: 'UNAVAILABLE', request_id: id }, [project.root, 'a FIFO']);
      expect(text).not.toContain(project.root);

      const many = (await client.callTool({ name: 'verify_merchants', arguments: { domains: [FOLDER] } })) as unknown as {
        structuredContent: { results: { problem: { code: string; request_id?: string } }[] };
      };
      expectCauseLogged(g, many.structuredContent.results[0]!.problem, [project.root, 'a folder']);
    } finally {
      await client.close();
    }
  });
});

describe('the records folder taken away', () => {
  it('is STORE_UNAVAILABLE with a request id; the folder is named in the log line only', async () => {
    const project = await makeProject();
    const g = await startTestGateway(project);
    await rm(project.recordsDir, { recursive: true, force: true });
    const { value } = await poll(
      () => g.verify('acme-outdoor.example'),
      (r) => r.status === 503,
      { timeoutMs: 5000 },
    );
    expectCauseLogged(g, expectProblem(value, 503, 'STORE_UNAVAILABLE'), [project.recordsDir]);
    // A batch is refused whole, the same way.
    const batch = await g.request('/v1/verify/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domains: ['acme-outdoor.example', 'never-seen.example'] }),
    });
    expectCauseLogged(g, expectProblem(batch, 503, 'STORE_UNAVAILABLE'), [project.recordsDir]);
    for (const path of ['/v1/builds', '/v1/history?domain=acme-outdoor.example', '/v1/absence?domain=never-seen.example']) {
      const r = await g.request(path);
      expect(r.status, path).toBe(503);
      expect(r.text, path).not.toContain(project.root);
    }
  });
});

describe('the API key file unreadable for over a minute', () => {
  it('any Bearer token is STORE_UNAVAILABLE with a request id; the file is named in the log line only', async () => {
    let now = 0;
    const project = await makeProject();
    const g = await startTestGateway(project, { apiKeysClock: () => now });
    expect((await g.verify('acme-outdoor.example')).status).toBe(200);
    // A folder where the key file was: its version moves, and reading it fails (EISDIR).
    await rm(project.apiKeysFile);
    await mkdir(project.apiKeysFile);
    await expect(g.gateway.services.apiKeys.refresh()).rejects.toThrow();
    now += 61_000;
    for (const authorization of ['Bearer x', `Bearer ${g.key}`]) {
      const r = await g.request('/v1/verify?domain=acme-outdoor.example', { authorization });
      expectCauseLogged(g, expectProblem(r, 503, 'STORE_UNAVAILABLE'), [project.apiKeysFile, 'EISDIR']);
    }
  });
});
