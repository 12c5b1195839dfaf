/**
 * The compact answers the gateway keeps (service/compact-lookups.ts, CACHE_LIMITS in core/limits.ts),
 * on the real gateway over real builds: bounded by bytes (each its build's one size), the least
 * recently asked dropped first, all of a build dropped once another build is live, and a kept answer
 * the same bytes as the build's file. Asserts what the cache reports, never the process's memory.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bucketHex } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { CURRENT_LINK, LOOKUP_ANSWERS_FILE } from '../../core/layout.ts';
import { CACHE_LIMITS } from '../../core/limits.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
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
