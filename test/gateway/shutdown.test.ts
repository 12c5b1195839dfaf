/**
 * Graceful shutdown: close() stops taking connections but lets a request already in flight
 * finish with its answer. To hold a request in flight deterministically, a record file is
 * replaced by a named pipe (mkfifo): the gateway's read of it blocks until the test writes the
 * record's bytes into the pipe.
 */
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { open, readFile, rm, type FileHandle } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { liveRecordFile, makeProject } from '../support/project.ts';
import { poll, sleep } from '../support/wait.ts';

afterAll(cleanup);

/** Opens the pipe for writing without blocking; succeeds only once a reader (the gateway) has it open. */
async function openWriterWhenRead(fifo: string): Promise<FileHandle> {
  const { value } = await poll(
    () => open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENXIO') return null; // no reader yet
      throw error;
    }),
    (fh) => fh !== null,
    { timeoutMs: 5000, intervalMs: 5 },
  );
  return value!;
}

describe('close()', () => {
  it('lets an in-flight request complete with 200, refuses new connections, then resolves', async () => {
    const project = await makeProject();
    const g = await startTestGateway(project);
    const domain = 'gadget-hub.example';
    const file = liveRecordFile(project, domain);
    const bytes = await readFile(file);
    // Warm a keep-alive connection, as a real client would have.
    expect((await g.verify('never-audited-warm.example')).status).toBe(200);

    await rm(file);
    execFileSync('mkfifo', [file]);

    const inFlight = g.verify(domain);
    const writer = await openWriterWhenRead(file); // the gateway is now inside the request
    let closed = false;
    const closing = g.gateway.close().then(() => {
      closed = true;
    });

    await sleep(150);
    expect(closed).toBe(false); // still waiting for the request in flight
    // No new connection is accepted once closing has begun.
    const refused = await fetch(`${g.url}/healthz`).then(
      (res) => `answered ${res.status}`,
      (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? error.message,
    );
    expect(refused).toMatch(/^(ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET)$/);

    await writer.write(bytes);
    await writer.close();

    const r = await inFlight;
    expect(r.status).toBe(200);
    expect(r.bytes.equals(bytes)).toBe(true);
    await closing;
    expect(closed).toBe(true);
    const line = g.logs.find((l) => l.msg === 'request' && l.domain === domain);
    expect(line).toMatchObject({ status: 200, method: 'GET', path: '/v1/verify' });
  });

  it('waits for every request in flight (two connections), and each completes with its own record', async () => {
    const project = await makeProject();
    const g = await startTestGateway(project);
    const domains = ['harbor-furniture.example', 'fictional-candles.myshopify.com'];
    const files = domains.map((d) => liveRecordFile(project, d));
    const contents = await Promise.all(files.map((f) => readFile(f)));
    for (const f of files) {
      await rm(f);
      execFileSync('mkfifo', [f]);
    }
    const inFlight = domains.map((d) => g.verify(d));
    const writers = await Promise.all(files.map((f) => openWriterWhenRead(f)));
    let closed = false;
    const closing = g.gateway.close().then(() => {
      closed = true;
    });

    // Answer the second request first: close() must still wait for the first one.
    await writers[1]!.write(contents[1]!);
    await writers[1]!.close();
    const second = await inFlight[1]!;
    expect(second.status).toBe(200);
    expect(second.bytes.equals(contents[1]!)).toBe(true);
    await sleep(100);
    expect(closed).toBe(false);

    await writers[0]!.write(contents[0]!);
    await writers[0]!.close();
    const first = await inFlight[0]!;
    expect(first.status).toBe(200);
    expect(first.bytes.equals(contents[0]!)).toBe(true);
    await closing;
    expect(closed).toBe(true);
  });
});

describe('mvr serve on SIGTERM', () => {
  it('drains the request in flight, answers it with 200, logs the shutdown and exits 0', async () => {
    const { spawn } = await import('node:child_process');
    const { createApiKey } = await import('../../service/api-keys.ts');
    const project = await makeProject();
    const { key } = await createApiKey(project.apiKeysFile, 'sigterm');
    const domain = 'juniper-pets.example';
    const file = liveRecordFile(project, domain);
    const bytes = await readFile(file);
    const child = spawn(
      process.execPath,
      ['bin/mvr.js', 'serve', '--port', '0', '--records', project.recordsDir, '--public', project.publicDir, '--api-keys', project.apiKeysFile],
      { cwd: new URL('../..', import.meta.url), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const { value: url } = await poll(async () => /"msg":"listening","url":"([^"]+)"/.exec(out)?.[1] ?? null, (u) => u !== null, { timeoutMs: 15_000, intervalMs: 50 });
      await rm(file);
      execFileSync('mkfifo', [file]);
      const inFlight = fetch(`${url}/v1/verify?domain=${domain}`, { headers: { authorization: `Bearer ${key}` } });
      const writer = await openWriterWhenRead(file);
      child.kill('SIGTERM');
      await sleep(200);
      expect(child.exitCode).toBeNull(); // still draining
      await writer.write(bytes);
      await writer.close();
      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
      expect(await exited).toBe(0);
      expect(out).toMatch(/"msg":"shutting down","signal":"SIGTERM"/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('a port already in use', () => {
  it('is INVALID_CONFIG naming the port, not an unexpected error, and nothing is left running', async () => {
    const { createServer } = await import('node:net');
    const { MvrError } = await import('../../core/errors.ts');
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    const project = await makeProject();
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
