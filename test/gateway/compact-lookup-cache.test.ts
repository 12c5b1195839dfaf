/**
 * The compact answers the gateway keeps (service/compact-lookups.ts, CACHE_LIMITS in core/limits.ts),
 * on the real gateway over real builds: bounded by bytes (each its build's one size), the least
 * recently asked dropped first, all of a build dropped once another build is live, and a kept answer
 * the same bytes as the build's file. Asserts what the cache reports, never the process's memory.
 * The statement asked first (`GET /v1/lookup`) is made once per live build and served checkpoint.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bucketHex } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILD_CHECKPOINT_FILE, BUILD_SERVED_CHECKPOINT_FILE, BUILDS_DIR, CURRENT_LINK, LOOKUP_ANSWERS_FILE } from '../../core/layout.ts';
import { CACHE_LIMITS } from '../../core/limits.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { gatewayOver, loggedProject } from '../support/logged-project.ts';
import { build, makeProject } from '../support/project.ts';

afterAll(cleanup);

const months = ['2026-10-20', '2026-11-01'].map((d) => Date.parse(`${d}T00:00:00Z`));

describe('the compact answers kept', async () => {
  const project = await makeProject({ build: false });
  await build(project, { now: months[0]!, keep: 2 });
  const probe = await startTestGateway(project, { rateLimitPerMinute: 10_000 });
  const { bits, bucket_bytes: size } = (await probe.request('/v1/lookup')).json.statement.lookup as { bits: number; bucket_bytes: number };
  await probe.close();
  // Room for one answer, not two.
  const limit = size + Math.floor(size / 2);
  const g = await startTestGateway(project, { rateLimitPerMinute: 10_000, compactAnswerBytes: limit });
  const ask = async (bucket: number) => {
    const r = await g.request(`/v1/lookup/${bits}/${bucketHex(bucket, bits)}`);
    expect(r.status).toBe(200);
    return r.bytes;
  };
  const stats = () => g.gateway.services.compact.stats();

  it('defaults to the bound in the limits table', () => {
    expect(probe.gateway.services.compact.stats().limitBytes).toBe(CACHE_LIMITS.compactAnswerBytes);
  });

  it("serves the build's bytes, keeps answers up to its byte bound, then drops the least recently asked", async () => {
    const file = await readFile(join(project.recordsDir, CURRENT_LINK, LOOKUP_ANSWERS_FILE));
    expect((await ask(1)).equals(file.subarray(size, 2 * size))).toBe(true);
    expect(stats()).toMatchObject({ answers: 1, bytes: size, limitBytes: limit });
    expect((await ask(0)).equals(file.subarray(0, size))).toBe(true);
    expect(stats()).toMatchObject({ answers: 1, bytes: size });
    await ask(0); // a hit
    expect(stats()).toMatchObject({ answers: 1, bytes: size });
  });

  it('drops every answer of a build once another build is live', async () => {
    const before = stats().build;
    expect(before).not.toBeNull();
    await build(project, { now: months[1]!, keep: 2 });
    await g.gateway.services.records.refresh();
    await ask(0);
    expect(stats().build).not.toBe(before);
    expect(stats()).toMatchObject({ answers: 1, bytes: size });
  });
});

describe('the statement a private client asks first (GET /v1/lookup)', async () => {
  const project = await loggedProject();
  await build(project, { now: months[0]!, keep: 2 });
  // No refresh timer: each refresh below is the test's own, so what is read when is known.
  const g = await gatewayOver(project, { refreshMs: 0 });
  const { records, proofs, compact } = g.gateway.services;
  const october = (await records.buildMap()).build;
  // November's build grows the log; the gateway serves October until its next refresh.
  await build(project, { now: months[1]!, keep: 2 });
  const newer = await readFile(join(project.recordsDir, CURRENT_LINK, BUILD_CHECKPOINT_FILE), 'utf8');
  const proofOf = (head: { bytes: Buffer }) => JSON.parse(head.bytes.toString('utf8')).statement_proof as string;

  it('is the same bytes and entity tag on every request: nothing made per request', async () => {
    const first = await compact.head();
    expect(proofOf(first)).toBeDefined();
    expect(await compact.head()).toBe(first);
    const r = await g.request('/v1/lookup');
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).toBe(first.etag);
    expect(Buffer.from(r.bytes).equals(first.bytes)).toBe(true);
  });

  it('is made again when a refresh reads a newer served checkpoint, and not before', async () => {
    const before = await compact.head();
    expect(proofOf(before)).not.toContain(newer);
    // What `mvr log witness` writes once the quorum cosigned the log's newer head.
    await writeFile(join(project.recordsDir, BUILDS_DIR, october, BUILD_SERVED_CHECKPOINT_FILE), newer);
    expect(await compact.head()).toBe(before);
    await proofs.refreshLive();
    const after = await compact.head();
    expect(after.etag).not.toBe(before.etag);
    expect(proofOf(after)).toContain(newer);
    expect(await compact.head()).toBe(after);
  });

  it('is made for the new build once it is live', async () => {
    await records.refresh();
    const head = await compact.head();
    expect(JSON.parse(head.bytes.toString('utf8')).statement.build).not.toBe(october);
    expect(proofOf(head)).toContain(newer);
  });
});
