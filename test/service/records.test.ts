/**
 * The records service on its own, without HTTP: the one place a domain's answer is decided.
 * Real files from a real build, real signatures; the gateway and MCP tests show the shells
 * answer with exactly these bytes.
 */
import { rename } from 'node:fs/promises';
import { verifyRecord } from '@merchant-verify/verifier';
import { canonicalJson, formatTimestamp } from '@merchant-verify/verifier/internal/issuer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unverifiedRecord } from '../../core/record.ts';
import type { RecordsService } from '../../service/records.ts';
import { openRecordsStack, type RecordsStackOptions } from '../../service/records-stack.ts';
import { cleanup } from '../support/gateway.ts';
import { liveRecords, publishedKeySet } from '../support/outputs.ts';
import { editLiveRecord } from '../support/packs.ts';
import { ISSUER, makeProject, type Project, SCHEMA_URL } from '../support/project.ts';

const AUDITED = 'acme-outdoor.example';
const NEVER = 'never-seen-shop.example';

afterAll(cleanup);

async function open(p: Project, overrides: Partial<RecordsStackOptions> = {}): Promise<RecordsService> {
  return (
    await openRecordsStack({
      store: { url: p.recordsDir, publicDir: p.publicDir },
      issuer: ISSUER,
      schemaUrl: SCHEMA_URL,
      cacheBytes: 1 << 20,
      ...overrides,
    })
  ).records;
}

describe('RecordsService.recordFor', () => {
  let project: Project;
  let records: RecordsService;
  beforeAll(async () => {
    project = await makeProject();
    records = await open(project);
    await records.refresh();
  });

  it('serves every stored record as its exact bytes, verified and marked audited', async () => {
    const files = await liveRecords(project);
    expect(files.size).toBeGreaterThan(10);
    for (const [domain, bytes] of files) {
      const served = await records.recordFor(domain);
      expect(served.audited).toBe(true);
      expect(served.bytes.equals(bytes)).toBe(true);
    }
  });

  it('answers a never-audited domain with the canonical never-audited record, issued at the start of the second', async () => {
    const now = Date.parse('2026-11-23T10:00:00.750Z');
    const served = await records.recordFor(NEVER, now);
    expect(served.audited).toBe(false);
    const expected = canonicalJson(
      unverifiedRecord(NEVER, { issuer: ISSUER, schemaUrl: SCHEMA_URL, issuedAt: formatTimestamp(Date.parse('2026-11-23T10:00:00.000Z')) }),
    );
    expect(served.bytes.toString('utf8')).toBe(expected);
    // The same second, the same bytes and entity tag; the next second, another.
    expect((await records.recordFor(NEVER, now + 200)).etag).toBe(served.etag);
    expect((await records.recordFor(NEVER, now + 300)).etag).not.toBe(served.etag);
    // Unsigned: a verifier says UNSIGNED, never valid.
    expect(verifyRecord(JSON.parse(expected), (await publishedKeySet(project)).keySet)).toMatchObject({ valid: false, code: 'UNSIGNED' });
  });
});

describe('the serve rule', () => {
  it('refuses a tampered record with UNAVAILABLE, and never answers it as never audited', async () => {
    const project = await makeProject();
    await editLiveRecord(project, AUDITED, (record) => JSON.stringify({ ...record, score: 100 }));
    const rejected: string[] = [];
    const records = await open(project, { onRejected: (domain, reason) => rejected.push(`${domain}: ${reason}`) });
    await records.refresh();
    await expect(records.recordFor(AUDITED)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(rejected.join('\n')).toMatch(/BAD_SIGNATURE/);
  });

  it('answers STORE_UNAVAILABLE once the records folder is gone, for domains answered from memory before it went', async () => {
    const project = await makeProject();
    const records = await open(project);
    await records.refresh();
    for (const domain of [AUDITED, NEVER, NEVER]) await records.recordFor(domain);
    await rename(project.recordsDir, `${project.recordsDir}.away`);
    await records.refresh();
    for (const domain of [AUDITED, NEVER]) await expect(records.recordFor(domain)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('answers STORE_UNAVAILABLE when the records folder is gone, for audited and never-audited domains alike', async () => {
    const project = await makeProject();
    await rename(project.recordsDir, `${project.recordsDir}.away`);
    const records = await open(project);
    await records.refresh();
    for (const domain of [AUDITED, NEVER]) await expect(records.recordFor(domain)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(records.health()).toMatchObject({ ok: false, records: { ok: false } });
  });
});
