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
import { cleanup, liveRecordFile, makeProject, poll, sleep, startTestGateway } from './helpers.ts';

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
    await expect(fetch(`${g.url}/healthz`, { headers: { connection: 'close' } })).rejects.toThrow();

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

  it('lets a never-audited request sent just before close() complete with 200', async () => {
    const project = await makeProject({ build: true });
    const g = await startTestGateway(project);
    expect((await g.verify('warm-up.example')).status).toBe(200);
    // Send on the warm connection, and close once the gateway has the request (its log line is
    // written when the answer is done, so wait on the socket instead: the request is on the wire
    // as soon as fetch has handed it to undici; give the server one turn to read it).
    const pending = g.verify('never-audited-at-close.example');
    await new Promise<void>((resolve) => setImmediate(resolve));
    const closing = g.gateway.close();
    const r = await pending;
    await closing;
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ domain: 'never-audited-at-close.example', status: 'unverified', score: null });
  });
});
