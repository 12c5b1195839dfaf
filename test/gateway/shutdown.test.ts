/**
 * Graceful shutdown: close() stops taking connections but lets a request already in flight
 * finish with its answer. To hold a request in flight deterministically, the gateway reads its
 * records from an http origin that holds the answer for a record's pack (one record a pack) until
 * the test releases it.
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CURRENT_LINK } from '../../core/layout.ts';
import { cleanup, startTestGateway, trustingProject } from '../support/gateway.ts';
import { holdingOrigin } from '../support/holding-origin.ts';
import { liveRecords } from '../support/outputs.ts';
import { livePlace } from '../support/packs.ts';
import { onePackARecord, type Project as TestProject } from '../support/project.ts';
import { poll, waitForExit } from '../support/wait.ts';

const origins: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(origins.map((o) => o.close()));
  await cleanup();
});

/** The pack of a domain's record (one record a pack: holding it holds that record's read). */
const packOf = async (project: TestProject, domain: string) => (await livePlace(project, domain)).path;

/** The project's live build behind a holding origin. */
async function originOf(project: TestProject) {
  const origin = await holdingOrigin(await realpath(join(project.recordsDir, CURRENT_LINK)));
  origins.push(origin);
  return origin;
}

describe('close()', () => {
  it('lets an in-flight request complete with 200, refuses new connections, then resolves', async () => {
    const project = await onePackARecord();
    const origin = await originOf(project);
    const g = await startTestGateway(project, { records: { url: origin.url }, trust: await trustingProject(project) });
    const domain = 'gadget-hub.example';
    const bytes = (await liveRecords(project)).get(domain)!;
    // Warm a keep-alive connection, as a real client would have.
    expect((await g.verify('never-audited-warm.example')).status).toBe(200);

    const held = origin.hold(await packOf(project, domain));
    const inFlight = g.verify(domain);
    await held.reached; // the gateway is now inside the request
    let closed = false;
    const closing = g.gateway.close().then(() => {
      closed = true;
    });

    // No new connection is accepted once closing has begun.
    const refused = await fetch(`${g.url}/healthz`).then(
      (res) => `answered ${res.status}`,
      (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? error.message,
    );
    expect(refused).toMatch(/^(ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET)$/);
    expect(closed).toBe(false); // still waiting for the request in flight

    held.release();
    const r = await inFlight;
    expect(r.status).toBe(200);
    expect(r.bytes.equals(bytes)).toBe(true);
    // Its connection ends with it (not kept alive until a time-out), so close() ends now.
    expect(r.headers.get('connection')).toBe('close');
    await closing;
    expect(closed).toBe(true);
    const line = g.logs.find((l) => l.msg === 'request' && l.domain === domain);
    expect(line).toMatchObject({ status: 200, method: 'GET', path: '/v1/verify' });
  });

  it('waits for every request in flight (two connections), and each completes with its own record', async () => {
    const project = await onePackARecord();
    const origin = await originOf(project);
    const g = await startTestGateway(project, { records: { url: origin.url }, trust: await trustingProject(project) });
    const domains = ['harbor-furniture.example', 'fictional-candles.myshopify.com'];
    const records = await liveRecords(project);
    const holds = await Promise.all(domains.map(async (d) => origin.hold(await packOf(project, d))));
    const inFlight = domains.map((d) => g.verify(d));
    await Promise.all(holds.map((h) => h.reached));
    let closed = false;
    const closing = g.gateway.close().then(() => {
      closed = true;
    });

    // Answer the second request first: close() must still wait for the first one.
    holds[1]!.release();
    const second = await inFlight[1]!;
    expect(second.status).toBe(200);
    expect(second.bytes.equals(records.get(domains[1]!)!)).toBe(true);
    expect(second.headers.get('connection')).toBe('close');
    expect(closed).toBe(false);

    holds[0]!.release();
    const first = await inFlight[0]!;
    expect(first.status).toBe(200);
    expect(first.bytes.equals(records.get(domains[0]!)!)).toBe(true);
    await closing;
    expect(closed).toBe(true);
  });
});

describe('mvr serve on SIGTERM', () => {
  it('drains the request in flight, answers it with 200, logs the shutdown and exits 0', async () => {
    const { spawn } = await import('node:child_process');
    const { createApiKey } = await import('../../access/api-keys.ts');
    const project = await onePackARecord();
    const origin = await originOf(project);
    const { key } = await createApiKey(project.apiKeysFile, 'sigterm');
    const domain = 'juniper-pets.example';
    const bytes = (await liveRecords(project)).get(domain)!;
    const child = spawn(
      process.execPath,
      [
        'bin/mvr.js',
        'serve',
        '--port',
        '0',
        '--records',
        origin.url,
        '--public',
        project.publicDir,
        '--api-keys',
        project.apiKeysFile,
        '--trusted-keys',
        project.keySetFile,
      ],
      { cwd: new URL('../..', import.meta.url), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
    try {
      const { value: url } = await poll(
        async () => /"msg":"listening","url":"([^"]+)"/.exec(out)?.[1] ?? null,
        (u) => u !== null,
        { timeoutMs: 15_000, intervalMs: 50 },
      );
      const held = origin.hold(await packOf(project, domain));
      const inFlight = fetch(`${url}/v1/verify?domain=${domain}`, { headers: { authorization: `Bearer ${key}` } });
      await held.reached;
      child.kill('SIGTERM');
      await poll(
        async () => out,
        (o) => o.includes('"msg":"shutting down"'),
        { timeoutMs: 5000, intervalMs: 10 },
      );
      expect(child.exitCode).toBeNull(); // still draining
      held.release();
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(res.headers.get('connection')).toBe('close');
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
      expect(await waitForExit(child, 'mvr serve after SIGTERM', () => out)).toBe(0);
      expect(out).toMatch(/"msg":"shutting down","signal":"SIGTERM"/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('a port already in use', () => {
  it('is INVALID_CONFIG naming the port, not an unexpected error, and nothing is left running', async () => {
    const { createServer } = await import('node:net');
    const { MvrError } = await import('../../core/errors/errors.ts');
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    const project = await onePackARecord();
    try {
      const error = await startTestGateway(project, { port }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(MvrError);
      expect((error as InstanceType<typeof MvrError>).code).toBe('INVALID_CONFIG');
      expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    } finally {
      holder.close();
    }
  });
});
