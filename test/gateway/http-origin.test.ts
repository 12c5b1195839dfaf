/**
 * Records behind an HTTP origin (`--records https://...`): a real node static server started by
 * the test serves the live build's folder; the gateway reads it with undici and applies the same
 * verify-before-serve rule. Origin down is STORE_UNAVAILABLE; origin back, answers come back.
 */

import { readFile, realpath } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway, type TestGateway, trustingProject } from '../support/gateway.ts';
import { expectCauseLogged, expectProblem } from '../support/gateway-expect.ts';
import { editLiveRecord, livePlace, liveRecordBytes } from '../support/packs.ts';
import { makeProject, type Project } from '../support/project.ts';
import { sendFile } from '../support/static-origin.ts';
import { poll } from '../support/wait.ts';

interface Origin {
  url: string;
  requests: string[];
  /** Answer 503 to the next `n` requests (a flaky origin). */
  failNext(n: number): void;
  stop(): Promise<void>;
  start(): Promise<void>;
}

async function startOrigin(root: string, port = 0): Promise<Origin> {
  let failures = 0;
  const requests: string[] = [];
  let server: Server;
  let boundPort = port;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer(async (req, res) => {
        const path = decodeURIComponent(new URL(req.url ?? '/', 'http://origin').pathname);
        requests.push(path);
        if (failures > 0) {
          failures--;
          res.writeHead(503).end();
          return;
        }
        const file = normalize(join(root, path));
        if (!file.startsWith(root)) return void res.writeHead(400).end();
        try {
          sendFile(req, res, await readFile(file));
        } catch {
          res.writeHead(404).end();
        }
      });
      server.listen(boundPort, '127.0.0.1', () => {
        boundPort = (server.address() as { port: number }).port;
        resolve();
      });
    });
  await listen();
  return {
    get url() {
      return `http://127.0.0.1:${boundPort}`;
    },
    requests,
    failNext: (n) => (failures = n),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    start: listen,
  };
}

describe('records from an HTTP origin', () => {
  let project: Project;
  let origin: Origin;
  let g: TestGateway;

  beforeAll(async () => {
    project = await makeProject();
    origin = await startOrigin(await realpath(join(project.recordsDir, 'current')));
    g = await startTestGateway(project, { records: { url: origin.url }, trust: await trustingProject(project) });
  });
  afterAll(async () => {
    await origin.stop().catch(() => undefined);
    await cleanup();
  });

  it('serves the origin file byte for byte after verifying it, and never-audited domains as unverified', async () => {
    const r = await g.verify('https://www.acme-outdoor.example/x');
    expect(r.status).toBe(200);
    expect(r.bytes.equals(await liveRecordBytes(project, 'acme-outdoor.example'))).toBe(true);
    expect(origin.requests).toContain(`/${(await livePlace(project, 'acme-outdoor.example')).path}`);
    const u = await g.verify('never-audited-origin.example');
    expect(u.status).toBe(200);
    expect(u.json).toMatchObject({ status: 'unverified', score: null });
  });

  it('keeps no build history, and says why (an origin serves one build)', async () => {
    for (const path of [
      '/v1/builds',
      '/v1/history?domain=acme-outdoor.example',
      '/v1/changes?since=x',
      '/v1/verify?domain=acme-outdoor.example&build=x',
    ]) {
      expect(expectProblem(await g.request(path), 404, 'BUILD_NOT_FOUND').detail).toMatch(/keeps no build history: .*http\(s\) origin/);
    }
  });

  it('retries a flaky origin (503s) with backoff and still answers', async () => {
    origin.failNext(2);
    const r = await g.verify('gadget-hub.example');
    expect(r.status).toBe(200);
    expect(r.json.domain).toBe('gadget-hub.example');
  });

  it('a tampered file at the origin is refused (503 UNAVAILABLE), never served', async () => {
    await editLiveRecord(project, 'harbor-furniture.example', (record) => JSON.stringify({ ...record, score: 99 }));
    expectProblem(await g.verify('harbor-furniture.example'), 503, 'UNAVAILABLE');
  });

  it('origin down: STORE_UNAVAILABLE for known and never-audited domains alike; origin back: answers come back', async () => {
    await origin.stop();
    const { value: down } = await poll(
      () => g.verify('juniper-pets.example'),
      (r) => r.status === 503,
      { timeoutMs: 5000, intervalMs: 100 },
    );
    // The answer says what; the origin's address is in the request's log line only.
    expectCauseLogged(g, expectProblem(down, 503, 'STORE_UNAVAILABLE'), [new URL(origin.url).host]);
    // The live build's checked map may answer for at most one refresh interval more; then it is refused too.
    const { value: never } = await poll(
      () => g.verify('never-audited-while-down.example'),
      (r) => r.status === 503,
      { timeoutMs: 5000, intervalMs: 100 },
    );
    expectCauseLogged(g, expectProblem(never, 503, 'STORE_UNAVAILABLE'), [new URL(origin.url).host]);
    await origin.start();
    const { value: back } = await poll(
      () => g.verify('juniper-pets.example'),
      (r) => r.status === 200,
      { timeoutMs: 5000, intervalMs: 100 },
    );
    expect(back.json.domain).toBe('juniper-pets.example');
  });
});
